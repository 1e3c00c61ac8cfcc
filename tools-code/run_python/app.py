"""`run_python`: runs the model's Python code in a fresh interpreter inside
the tool's cell. The cell is the boundary: the code sees the workspace's
folders as the grant allows (the first root is the current directory), no
network, no programs, no environment; the host's deadline, memory cap and
output cap hold whatever the code does. This file only runs the code and
reports what happened, as a script run would show it.

Args `{"code": "...", "args": ["..."], "stdin": "..."}`; result
`{"stdout", "stderr", "value", "error", "cut"}`:

- `stdout` / `stderr`: what the code printed, each kept to
  `STREAM_CAP` characters (`cut` says how many more there were);
- `value`: the `repr` of the last statement when it is an expression
  (as an interactive prompt shows it), else null;
- `error`: on an exception, its type and message with the traceback's last
  frames of the code itself; on `sys.exit(n)` with n not 0, the exit.
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
)
for _name in PRELOADED:
    try:
        importlib.import_module(_name)
    except ImportError:  # not in this interpreter's build: left out
        pass

# Each printed stream is kept to this many characters: with the other
# stream, the value and the error it stays under the manifest's output cap
# (256 KiB), so a chatty loop is cut here, with the count said, instead of
# failing the whole call at the host's cap.
STREAM_CAP = 100_000

# The value's repr and the error's text are kept to this many characters.
TEXT_CAP = 20_000

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


def shorten(text, cap=TEXT_CAP):
    if len(text) <= cap:
        return text
    return text[:cap] + f"… ({len(text) - cap} more characters)"


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
    if isinstance(error, (OSError, ImportError)) or (
        isinstance(error, AttributeError) and getattr(error, "name", None) in OFFERED_NOT
    ):
        text += "\n" + CELL_HINT
    return shorten(text)


# Names of `os` a WASI interpreter has not: calling them is an
# AttributeError that the hint explains.
OFFERED_NOT = {"system", "fork", "popen", "spawnv", "execv", "kill"}


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


class Tool(exports.Tool):
    def call(self, args: str) -> str:
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
                error = shorten("".join(traceback.format_exception_only(type(e), e)).rstrip("\n"))
            else:
                exec(compile(module, CODE_NAME, "exec"), namespace)
                if last is not None:
                    result = eval(compile(last, CODE_NAME, "eval"), namespace)
                    if result is not None:
                        value = shorten(repr(result))
        except SystemExit as e:
            if e.code not in (None, 0):
                error = f"SystemExit: the code exited with {e.code!r}"
        except BaseException as e:  # the code's own failure is the answer
            error = describe(e)
        finally:
            sys.stdout, sys.stderr, sys.stdin, sys.argv = saved
        cut = {
            name: stream.dropped
            for name, stream in (("stdout", stdout), ("stderr", stderr))
            if stream.dropped
        }
        return json.dumps(
            {
                "stdout": stdout.text(),
                "stderr": stderr.text(),
                "value": value,
                "error": error,
                "cut": cut or None,
            },
            ensure_ascii=False,
        )
