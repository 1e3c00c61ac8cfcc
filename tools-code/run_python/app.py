"""`run_python`: runs the model's Python code in a fresh interpreter inside
the tool's cell. The cell is the boundary: the code sees the workspace's
folders as the grant allows (the first root is the current directory), no
network, no programs, no environment; the host's deadline, memory cap and
output cap hold whatever the code does. This file only runs the code and
reports what happened, as a script run would show it.

Args `{"code": "...", "args": ["..."], "stdin": "..."}`; result
`{"stdout", "stderr", "value", "error", "cut"}`:

- `stdout` / `stderr`: what the code printed, each kept to `STREAM_BYTES`
  of the answer (`cut` says how many more characters there were);
- `value`: the `repr` of the last statement when it is an expression
  (as an interactive prompt shows it), else null;
- `error`: on an exception, its type and message with the traceback's last
  frames of the code itself; on `sys.exit(n)` with n not 0, the exit.

The answer is built with what was taken before the code ran, but the code
runs in this same interpreter: the answer is only as trustworthy as the
code, which is the model's own.
"""

import ast
import builtins
import importlib
import io
import json
import sys
import traceback

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tool import Error_InvalidArgs

# The standard library a data task reaches for. The interpreter's library
# exists only while the component is built: what is imported then is in
# the component, ready at every call; anything else cannot be imported.
PRELOADED = (
    "array", "base64", "binascii", "bisect", "calendar", "collections",
    "colorsys", "copy", "csv", "dataclasses", "datetime", "decimal",
    "difflib", "enum", "fnmatch", "fractions", "functools", "glob", "gzip",
    "hashlib", "heapq", "hmac", "html", "html.parser", "io", "ipaddress",
    "itertools", "json", "math", "numbers", "operator", "os", "pathlib",
    "pprint", "random", "re", "secrets", "shlex", "statistics", "string",
    "struct", "tarfile", "textwrap", "time", "tomllib", "typing",
    "unicodedata", "urllib.parse", "uuid", "xml.dom.minidom",
    "xml.etree.ElementTree", "zipfile", "zlib", "zoneinfo",
    # Codecs looked up by name at run time (zip member names are cp437).
    "encodings.ascii", "encodings.cp437", "encodings.cp1252",
    "encodings.idna", "encodings.latin_1", "encodings.utf_16",
    "encodings.utf_8_sig", "encodings.unicode_escape",
    # Large integers' str() and int() in pure Python.
    "_pylong",
)
for _name in PRELOADED:
    try:
        importlib.import_module(_name)
    except ImportError:  # not in this interpreter's build: left out
        pass

# What each printed stream keeps in memory while the code runs, in
# characters; the answer then keeps what fits in STREAM_BYTES.
STREAM_CAP = 100_000

# Each printed stream's share of the answer, in bytes of its JSON (a
# character may take up to six, `\u0001`): with the other stream, the value
# and the error the answer stays under the manifest's output cap (256 KiB),
# so a chatty loop is cut here, with the count said, instead of failing the
# whole call at the host's cap.
STREAM_BYTES = 100_000

# The value's and the error's share, in bytes of JSON.
TEXT_BYTES = 20_000

# How many of the code's own frames an error shows (the last ones).
FRAMES = 5

# The file name the code's frames carry.
CODE_NAME = "<code>"

# Said after an error that comes from what the cell does not offer.
CELL_HINT = (
    "(run_python runs in a sandbox: only the workspace's folders, "
    "no network, no programs, no environment variables)"
)


class Capped(io.TextIOBase):
    """A text stream that keeps its first `cap` characters and counts the rest."""

    def __init__(self, cap):
        self.cap = cap
        self.parts = []
        self.kept = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self):
        return "".join(self.parts)


def json_size(text):
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def fitted(text, budget):
    """`text` made sendable and cut to `budget` bytes of JSON, and how many
    characters were cut. A character UTF-8 cannot carry (a lone surrogate,
    as from a file name that is not UTF-8) is shown as its escape."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if json_size(text) <= budget:
        return text, 0
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if json_size(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low], len(text) - low


def shorten(text):
    kept, cut = fitted(text, TEXT_BYTES)
    return kept + f"… ({cut} more characters)" if cut else kept


def describe(error):
    """The error's last frames in the code, and its type and message."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == CODE_NAME or not frame.filename.endswith("app.py")
    ]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(frames[-FRAMES:]))
    lines.extend(traceback.format_exception_only(type(error), error))
    text = "".join(lines).rstrip("\n")
    missing = isinstance(error, ImportError) and error.name not in SANDBOXED_MODULES
    if (isinstance(error, OSError) or isinstance(error, ImportError) and not missing) or (
        isinstance(error, AttributeError) and getattr(error, "name", None) in OFFERED_NOT
    ):
        text += "\n" + CELL_HINT
    elif missing:
        text += "\n(that module is not in run_python's standard library)"
    return text


# Names of `os` a WASI interpreter has not: calling them is an
# AttributeError that the hint explains.
OFFERED_NOT = {"system", "fork", "popen", "spawnv", "execv", "kill"}

# Modules of the standard library that a sandbox leaves out on purpose:
# failing to import one is the sandbox, said so; any other is just missing.
SANDBOXED_MODULES = {
    "socket", "_socket", "ssl", "select", "selectors", "subprocess",
    "_posixsubprocess", "multiprocessing", "asyncio", "urllib.request",
    "http.client", "ctypes", "signal", "pty", "termios", "resource", "mmap",
}


def arguments(text):
    try:
        args = json.loads(text)
    except ValueError as e:
        raise Err(Error_InvalidArgs(f"the arguments are not JSON: {e}"))
    code = args.get("code") if isinstance(args, dict) else None
    if not isinstance(code, str) or not code.strip():
        raise Err(Error_InvalidArgs("`code` must be Python source text, e.g. print(1 + 1)"))
    argv = args.get("args", [])
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise Err(Error_InvalidArgs("`args` must be a list of strings"))
    stdin = args.get("stdin", "")
    if not isinstance(stdin, str):
        raise Err(Error_InvalidArgs("`stdin` must be text"))
    return code, argv, stdin


def split_last_expression(code):
    """The code's module, and its last statement as an expression if it is one."""
    module = ast.parse(code, CODE_NAME, "exec")
    if module.body and isinstance(module.body[-1], ast.Expr):
        last = ast.Expression(module.body.pop().value)
        return module, last
    return module, None


def safely(show, thing, what):
    """`show(thing)`, or a plain word when the code made that fail."""
    try:
        return show(thing)
    except BaseException as e:  # the code's own objects may do anything
        return f"({what} could not be shown: {type(e).__name__})"


class Tool(exports.Tool):
    def call(self, args: str) -> str:
        # What the answer is built with, taken before the code runs: code
        # that replaces `json.dumps`, `repr` or this module's functions
        # changes its own namespace, not how its answer is reported.
        dumps, show, describe_error = json.dumps, repr, describe
        fit, cut_to_size, text_of = fitted, shorten, Capped.text
        code, argv, stdin = arguments(args)
        stdout, stderr = Capped(STREAM_CAP), Capped(STREAM_CAP)
        value, error = None, None
        saved = sys.stdout, sys.stderr, sys.stdin, sys.argv
        sys.stdout, sys.stderr = stdout, stderr
        sys.stdin = io.StringIO(stdin)
        sys.argv = [CODE_NAME, *argv]
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        try:
            try:
                module, last = split_last_expression(code)
            except SyntaxError as e:
                error = "".join(traceback.format_exception_only(type(e), e)).rstrip("\n")
            else:
                exec(compile(module, CODE_NAME, "exec"), namespace)
                if last is not None:
                    result = eval(compile(last, CODE_NAME, "eval"), namespace)
                    if result is not None:
                        value = safely(show, result, "the value")
        except SystemExit as e:
            if e.code not in (None, 0):
                error = "SystemExit: the code exited with " + safely(show, e.code, "its code")
        except BaseException as e:  # the code's own failure is the answer
            error = safely(describe_error, e, "the error")
        finally:
            sys.stdout, sys.stderr, sys.stdin, sys.argv = saved
        answer = {"cut": {}}
        for name, stream in (("stdout", stdout), ("stderr", stderr)):
            text, cut = fit(safely(text_of, stream, name), STREAM_BYTES)
            answer[name] = text
            if stream.dropped + cut:
                answer["cut"][name] = stream.dropped + cut
        answer["value"] = None if value is None else cut_to_size(value)
        answer["error"] = None if error is None else cut_to_size(error)
        answer["cut"] = answer["cut"] or None
        return dumps(
            {key: answer[key] for key in ("stdout", "stderr", "value", "error", "cut")},
            ensure_ascii=False,
        )
