#!/bin/sh
# python3 for a copy of .ci/run: `python3 -m venv DIR` makes DIR/bin/pip, which installs
# nothing, and DIR/bin/python, which writes its arguments to ./ci-args and exits with
# CI_PYTEST_RC, as pytest would. So a test sees what CI does with each of pytest's exit codes
# without installing anything or running the suite inside itself.
set -eu
[ "$1" = "-m" ] && [ "$2" = "venv" ] || { echo "python3_for_ci.sh: not a venv: $*" >&2; exit 2; }
mkdir -p "$3/bin"
printf '#!/bin/sh\nexit 0\n' > "$3/bin/pip"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" > ci-args\nexit "$CI_PYTEST_RC"\n' > "$3/bin/python"
chmod +x "$3/bin/pip" "$3/bin/python"
