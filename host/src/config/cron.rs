//! Cron expressions in a time zone: when a schedule fires.
//!
//! Parsing and matching are `croner`'s (Vixie-cron rules): 5 fields
//! (`minute hour day-of-month month day-of-week`) or 6 with seconds first;
//! day of week 0–6 with Sunday 0 (7 is Sunday too) and `MON`-style names;
//! when both day of month and day of week are restricted, either matching
//! is enough (`0 9 1 * MON` is the 1st of the month *and* every Monday);
//! `@yearly`, `@monthly`, `@weekly`, `@daily`, `@hourly`.
//!
//! Daylight saving time, in the schedule's own time zone:
//! - spring forward: a fixed time that does not exist that day (02:30 in
//!   Europe/Berlin on the last Sunday of March) fires at the first instant
//!   after the gap (03:00); interval expressions (`*/15 * * * *`) just
//!   have fewer instants that hour;
//! - fall back: a fixed time that happens twice (02:30 on the last Sunday
//!   of October) fires once, at the first; interval expressions fire in
//!   both passes of the hour, as the wall clock shows them.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The field names, for the message that says which one is wrong.
const FIELDS_5: [&str; 5] = ["minute", "hour", "day of month", "month", "day of week"];
const FIELDS_6: [&str; 6] = [
    "second",
    "minute",
    "hour",
    "day of month",
    "month",
    "day of week",
];

/// A cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct CronSchedule {
    expression: String,
    cron: Cron,
    zone: TimeZone,
    zone_name: String,
}

impl CronSchedule {
    /// Parses `expression` for the IANA time zone `zone` (`None`: the
    /// machine's). The error names the field that is wrong.
    pub fn parse(expression: &str, zone: Option<&str>) -> Result<Self, String> {
        let (zone, zone_name) = match zone {
            Some(name) => (
                TimeZone::get(name).map_err(|_| {
                    format!("`{name}` is not an IANA time zone (for example \"Europe/Berlin\" or \"UTC\")")
                })?,
                name.to_string(),
            ),
            None => {
                let zone = TimeZone::system();
                let name = zone.iana_name().unwrap_or("the machine's time zone").to_string();
                (zone, name)
            }
        };
        let cron = parse_cron(expression)?;
        Ok(Self {
            expression: expression.trim().to_string(),
            cron,
            zone,
            zone_name,
        })
    }

    pub fn expression(&self) -> &str {
        &self.expression
    }

    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// The time zone's name.
    pub fn zone_name(&self) -> &str {
        &self.zone_name
    }

    /// The first fire time strictly after `after`, if there is one.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        let origin = after.to_zoned(self.zone.clone());
        self.cron
            .find_next_occurrence(&origin, false)
            .ok()
            .map(|next| next.timestamp())
    }

    /// The latest fire time at or before `at`, if any.
    pub fn latest_at_or_before(&self, at: Timestamp) -> Option<Timestamp> {
        let origin = at.to_zoned(self.zone.clone());
        self.cron
            .find_previous_occurrence(&origin, true)
            .ok()
            .map(|fire| fire.timestamp())
            .filter(|fire| *fire <= at)
    }

    /// The fire times in `(after, until]`, oldest first, at most `limit`.
    pub fn fires_between(
        &self,
        after: Timestamp,
        until: Timestamp,
        limit: usize,
    ) -> Vec<Timestamp> {
        let mut fires = Vec::new();
        let mut cursor = after;
        while fires.len() < limit {
            match self.next_after(cursor) {
                Some(next) if next <= until => {
                    fires.push(next);
                    cursor = next;
                }
                _ => break,
            }
        }
        fires
    }
}

/// Parses a 5- or 6-field expression or an `@alias`, naming the wrong field.
fn parse_cron(expression: &str) -> Result<Cron, String> {
    let expression = expression.trim();
    let parser = CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build();
    let fields: Vec<&str> = expression.split_whitespace().collect();
    if !(expression.starts_with('@') || fields.len() == 5 || fields.len() == 6) {
        return Err(format!(
            "`{expression}` has {} fields; a cron expression has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first), or is an alias like @daily",
            fields.len()
        ));
    }
    parser.parse(expression).map_err(|error| {
        if expression.starts_with('@') {
            return format!(
                "`{expression}` is not an alias: use @yearly, @monthly, @weekly, @daily or @hourly"
            );
        }
        // Find the field at fault: each field alone, the others `*`.
        let names: &[&str] = if fields.len() == 6 {
            &FIELDS_6
        } else {
            &FIELDS_5
        };
        for (i, field) in fields.iter().enumerate() {
            let alone: Vec<&str> = (0..fields.len())
                .map(|j| if i == j { *field } else { "*" })
                .collect();
            if parser.parse(&alone.join(" ")).is_err() {
                return format!(
                    "the {} field `{field}` of `{expression}` is not valid ({})",
                    names[i],
                    range_hint(names[i])
                );
            }
        }
        format!("`{expression}` is not a valid cron expression: {error}")
    })
}

/// What a field accepts, for error messages.
fn range_hint(field: &str) -> &'static str {
    match field {
        "second" | "minute" => "0-59, lists, ranges and steps like */15",
        "hour" => "0-23",
        "day of month" => "1-31, or L for the last day",
        "month" => "1-12 or JAN-DEC",
        _ => "0-6 with Sunday 0 (7 is Sunday too) or SUN-SAT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn local(s: &CronSchedule, t: Timestamp) -> String {
        t.to_zoned(s.zone().clone())
            .strftime("%Y-%m-%d %H:%M:%S %Z")
            .to_string()
    }

    #[test]
    fn weekdays_at_half_past_seven_in_berlin() {
        let s = CronSchedule::parse("30 7 * * 1-5", Some("Europe/Berlin")).unwrap();
        // Friday 2026-11-27 08:00 Berlin → next is Monday 07:30.
        let next = s.next_after(at("2026-11-27T07:00:00Z")).unwrap();
        assert_eq!(local(&s, next), "2026-11-30 07:30:00 CET");
    }

    #[test]
    fn spring_forward_moves_a_fixed_time_past_the_gap_and_fall_back_fires_it_once() {
        let s = CronSchedule::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
        let fires = s.fires_between(at("2026-03-28T00:00:00Z"), at("2026-03-31T00:00:00Z"), 10);
        let shown: Vec<String> = fires.iter().map(|t| local(&s, *t)).collect();
        assert_eq!(
            shown,
            [
                "2026-03-28 02:30:00 CET",
                "2026-03-29 03:00:00 CEST",
                "2026-03-30 02:30:00 CEST"
            ]
        );
        let fires = s.fires_between(at("2026-10-24T00:00:00Z"), at("2026-10-27T00:00:00Z"), 10);
        let shown: Vec<String> = fires.iter().map(|t| local(&s, *t)).collect();
        assert_eq!(
            shown,
            [
                "2026-10-24 02:30:00 CEST",
                "2026-10-25 02:30:00 CEST",
                "2026-10-26 02:30:00 CET"
            ]
        );
    }

    #[test]
    fn an_interval_fires_in_both_passes_of_the_repeated_hour() {
        let s = CronSchedule::parse("0 * * * *", Some("Europe/Berlin")).unwrap();
        // 2026-10-25: 02:00 CEST, then 02:00 CET an hour later.
        let fires = s.fires_between(at("2026-10-24T23:30:00Z"), at("2026-10-25T02:30:00Z"), 10);
        let shown: Vec<String> = fires.iter().map(|t| local(&s, *t)).collect();
        assert_eq!(
            shown,
            [
                "2026-10-25 02:00:00 CEST",
                "2026-10-25 02:00:00 CET",
                "2026-10-25 03:00:00 CET"
            ]
        );
    }

    #[test]
    fn day_of_month_and_day_of_week_are_ored_and_sunday_is_0() {
        let s = CronSchedule::parse("0 9 1 * 0", Some("UTC")).unwrap();
        let fires = s.fires_between(at("2026-11-28T00:00:00Z"), at("2026-12-08T00:00:00Z"), 10);
        let shown: Vec<String> = fires.iter().map(|t| local(&s, *t)).collect();
        // Sunday the 29th, Tuesday the 1st (day of month), Sunday the 6th.
        assert_eq!(
            shown,
            [
                "2026-11-29 09:00:00 UTC",
                "2026-12-01 09:00:00 UTC",
                "2026-12-06 09:00:00 UTC"
            ]
        );
    }

    #[test]
    fn the_latest_fire_before_an_instant() {
        let s = CronSchedule::parse("*/10 * * * * *", Some("UTC")).unwrap();
        assert_eq!(
            s.latest_at_or_before(at("2026-01-08T00:00:05.5Z")),
            Some(at("2026-01-08T00:00:00Z"))
        );
        assert_eq!(
            s.latest_at_or_before(at("2026-01-08T00:00:10Z")),
            Some(at("2026-01-08T00:00:10Z"))
        );
    }

    #[test]
    fn seconds_and_aliases() {
        let s = CronSchedule::parse("*/10 * * * * *", Some("UTC")).unwrap();
        assert_eq!(
            s.next_after(at("2026-01-01T00:00:01Z")),
            Some(at("2026-01-01T00:00:10Z"))
        );
        let s = CronSchedule::parse("@daily", Some("UTC")).unwrap();
        assert_eq!(
            s.next_after(at("2026-01-01T00:00:01Z")),
            Some(at("2026-01-02T00:00:00Z"))
        );
    }

    #[test]
    fn a_bad_expression_names_its_field() {
        let e = CronSchedule::parse("30 25 * * *", Some("UTC")).unwrap_err();
        assert!(e.contains("the hour field `25`"), "{e}");
        let e = CronSchedule::parse("0 9 * * MONDAY", Some("UTC")).unwrap_err();
        assert!(e.contains("day of week"), "{e}");
        let e = CronSchedule::parse("0 9 * *", Some("UTC")).unwrap_err();
        assert!(e.contains("has 4 fields"), "{e}");
        let e = CronSchedule::parse("@sometimes", Some("UTC")).unwrap_err();
        assert!(e.contains("not an alias"), "{e}");
        let e = CronSchedule::parse("* * * * *", Some("Mars/Olympus")).unwrap_err();
        assert!(e.contains("IANA"), "{e}");
    }
}
