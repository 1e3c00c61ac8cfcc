//! A schedule's cron expression as a CronJob's `schedule`, and how late a
//! missed fire may still start.
//!
//! Kubernetes reads 5 fields (`minute hour day-of-month month
//! day-of-week`) with `*`, `?`, lists, ranges, steps and `JAN`/`MON`-style
//! names, day of week 0–6, and the aliases `@yearly` (`@annually`),
//! `@monthly`, `@weekly`, `@daily` (`@midnight`) and `@hourly`. toolcell
//! reads more (seconds, `L`, `W`, `#`, Sunday as 7): an expression beyond
//! Kubernetes is refused, never changed into one that fires at other times.

use crate::config::cron::CronSchedule;

/// The aliases Kubernetes takes as they are.
const ALIASES: [&str; 7] = [
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// The highest value of each field that Kubernetes takes (day of week:
/// Sunday is 0 only).
const FIELD_MAX: [u32; 5] = [59, 23, 31, 12, 6];
const FIELD_NAMES: [&str; 5] = ["minute", "hour", "day of month", "month", "day of week"];

/// How late a missed fire may start when `catch_up = "latest"`, at most: a
/// week, which covers a cluster down over a long weekend.
pub const LATEST_DEADLINE_MAX_S: i64 = 7 * 24 * 3600;

/// Kubernetes gives up on a CronJob that missed more than 100 fire times
/// inside its deadline; the deadline for `latest` holds fewer than this.
const MISSED_FIRES_BELOW: i64 = 99;

/// The fires looked at for the shortest gap between two: a year of a
/// minutely schedule is more than needed, a year of a daily one is all.
const GAP_SAMPLE_FIRES: usize = 2000;

/// `expression` as Kubernetes writes it, or why it cannot be (and what to
/// do), for the schedule `name`.
pub fn for_kubernetes(name: &str, expression: &str) -> Result<String, String> {
    let refuse = |why: String| {
        Err(format!(
            "schedule `{name}`: cron `{expression}` {why}\n  fix: write it with 5 fields (minute hour day-of-month month day-of-week) or an alias like @daily, as a Kubernetes CronJob takes it"
        ))
    };
    let trimmed = expression.trim();
    if trimmed.starts_with('@') {
        let alias = trimmed.to_ascii_lowercase();
        return match ALIASES.contains(&alias.as_str()) {
            true => Ok(alias),
            false => refuse("is an alias Kubernetes does not take".into()),
        };
    }
    let fields: Vec<&str> = trimmed.split_whitespace().collect();
    if fields.len() == 6 {
        return refuse("has a seconds field, which Kubernetes does not have".into());
    }
    if fields.len() != 5 {
        return refuse(format!("has {} fields", fields.len()));
    }
    for (at, field) in fields.iter().enumerate() {
        if let Err(why) = check_field(at, field) {
            return refuse(format!("has {} `{field}`: {why}", FIELD_NAMES[at]));
        }
    }
    Ok(fields.join(" "))
}

/// Whether Kubernetes reads `field`, the `at`th, as toolcell does.
fn check_field(at: usize, field: &str) -> Result<(), String> {
    let names: &[&str] = match at {
        3 => &MONTHS,
        4 => &WEEKDAYS,
        _ => &[],
    };
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((range, step)) => (range, Some(step)),
            None => (part, None),
        };
        if let Some(step) = step
            && step.parse::<u32>().is_err()
        {
            return Err(format!("the step `{step}` is not a number"));
        }
        if range == "*" || range == "?" {
            continue;
        }
        for value in range.split('-') {
            if let Ok(number) = value.parse::<u32>() {
                if number > FIELD_MAX[at] {
                    return Err(if at == 4 && number == 7 {
                        "Kubernetes takes Sunday as 0, not 7".into()
                    } else {
                        format!("{number} is above {}", FIELD_MAX[at])
                    });
                }
            } else if !names.contains(&value.to_ascii_uppercase().as_str()) {
                return Err(format!(
                    "`{value}` is not something Kubernetes reads there (no L, W or #)"
                ));
            }
        }
    }
    Ok(())
}

/// `startingDeadlineSeconds` for `catch_up = "latest"`: the latest missed
/// fire starts however late it is, up to [`LATEST_DEADLINE_MAX_S`], and
/// the window never holds the 100 missed fires at which Kubernetes gives
/// up. The shortest gap is measured from a fixed instant, so the same
/// config always gives the same number.
pub fn latest_deadline(cron: &CronSchedule) -> i64 {
    let from = jiff::Timestamp::UNIX_EPOCH;
    let fires = cron.fires_between(from, jiff::Timestamp::MAX, GAP_SAMPLE_FIRES);
    let shortest = fires
        .windows(2)
        .map(|pair| pair[1].as_second() - pair[0].as_second())
        .min()
        .unwrap_or(LATEST_DEADLINE_MAX_S);
    (shortest * MISSED_FIRES_BELOW).min(LATEST_DEADLINE_MAX_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_kubernetes_reads_passes_unchanged() {
        for ok in [
            "30 7 * * 1-5",
            "*/15 * * * *",
            "0 9 1,15 JAN-MAR mon",
            "0 0 ? * SUN",
        ] {
            assert_eq!(for_kubernetes("s", ok).as_deref(), Ok(ok));
        }
        assert_eq!(for_kubernetes("s", "@Daily").as_deref(), Ok("@daily"));
        assert_eq!(
            for_kubernetes("s", " 0  3 * * * ").as_deref(),
            Ok("0 3 * * *")
        );
    }

    #[test]
    fn what_it_cannot_read_is_refused_with_the_reason() {
        for (bad, why) in [
            ("0 30 7 * * *", "seconds field"),
            ("0 3 * * 7", "Sunday as 0"),
            ("0 3 L * *", "no L, W or #"),
            ("0 3 * * MON#2", "no L, W or #"),
            ("0 3 * * *  *", "seconds field"),
        ] {
            let error = for_kubernetes("nightly", bad).unwrap_err();
            assert!(
                error.contains("schedule `nightly`") && error.contains(why),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn the_latest_deadline_holds_fewer_than_a_hundred_fires() {
        let every = |expression: &str| {
            latest_deadline(&CronSchedule::parse(expression, Some("UTC")).unwrap())
        };
        assert_eq!(every("* * * * *"), 99 * 60);
        assert_eq!(every("0 * * * *"), 99 * 3600);
        assert_eq!(every("0 3 * * *"), LATEST_DEADLINE_MAX_S);
    }
}
