#!/usr/bin/env bash
# Builds a Python venv in which PyIceberg runs from its source tree and pyroaring is compiled from
# PyRoaringBitMap's source (it bundles CRoaring's amalgamation), so that the deletion vectors floe
# writes are decoded by Roaring code no one here wrote. The venv is what
# test/integration/readers/pyiceberg-read.test.ts looks for.
#
#   test/interop/pyiceberg/setup.sh [PYICEBERG_SRC] [PYROARING_SRC]
#
# Each source is a work tree or a git directory (its HEAD is exported). Defaults: the environment
# variables of the same names, else the mirrors under /work/.mirror when present. WHEELS (default
# /opt/pypi/files when it exists) names a folder of wheels for the dependencies, installed with
# --no-index; without it pip uses its configured index. PYTHON picks the interpreter (default python3, >= 3.10).
#
# Idempotent: a stamp records the two source commits; a second run with the same ones only checks that
# the venv imports both and prints what it holds.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
cache="$root/.cache/pyiceberg"
venv="$cache/venv"
pyiceberg_src=${1:-${PYICEBERG_SRC:-/work/.mirror/apache+iceberg-python/repo}}
pyroaring_src=${2:-${PYROARING_SRC:-/work/.mirror/Ezibenroc+PyRoaringBitMap/repo}}
python=${PYTHON:-python3}
links=${WHEELS:-}
[[ -n "$links" || ! -d /opt/pypi/files ]] || links=/opt/pypi/files

fail() {
  echo "setup.sh: $1" >&2
  exit 1
}
[[ -d "$pyiceberg_src" ]] || fail "no PyIceberg source at '$pyiceberg_src' (pass it as the first argument or PYICEBERG_SRC)"
[[ -d "$pyroaring_src" ]] || fail "no PyRoaringBitMap source at '$pyroaring_src' (pass it as the second argument or PYROARING_SRC)"

# revision SRC: the commit a source is at; a work tree with changes, or a folder outside git, gets a
# stamp that never matches, so it is built again every run.
revision() {
  local head
  head=$(git -C "$1" rev-parse HEAD 2>/dev/null) || {
    echo "unversioned-$$"
    return
  }
  if [[ "$(git -C "$1" rev-parse --is-bare-repository)" == false && -n "$(git -C "$1" status --porcelain)" ]]; then
    echo "$head-dirty-$$"
  else
    echo "$head"
  fi
}

# export_tree SRC SUBDIR DEST: copies SUBDIR of a source into DEST, from HEAD when SRC is a bare git dir.
export_tree() {
  rm -rf "$3" && mkdir -p "$3"
  if [[ -f "$1/HEAD" && -d "$1/objects" ]]; then
    git -C "$1" archive HEAD "$2" | tar x -C "$3"
  elif [[ "$2" == . ]]; then
    cp -R "$1/." "$3/"
  else
    cp -R "$1/$2" "$3/"
  fi
}

pip_install() {
  if [[ -n "$links" ]]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-index --find-links "$links" "$@"
  else
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
  fi
}

stamp="pyiceberg=$(revision "$pyiceberg_src") pyroaring=$(revision "$pyroaring_src")"
check='import pyiceberg, pyroaring, pyarrow, pyiceberg.avro.decoder_fast; print("pyiceberg", pyiceberg.__version__, "| pyroaring", pyroaring.__version__, "(CRoaring", pyroaring.__croaring_version__ + ") | pyarrow", pyarrow.__version__)'

if [[ -f "$cache/stamp" && "$(cat "$cache/stamp")" == "$stamp" ]] && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
  echo "up to date: $stamp"
else
  rm -rf "$venv" "$cache/stamp"
  "$python" -m venv "$venv"
  pip_install 'setuptools>=83' wheel 'cython>=3.0.2' # PyIceberg's build-system needs setuptools>=83
  pip_install mmh3 requests click rich 'pydantic!=2.4.0,!=2.4.1,!=2.12.0,!=2.12.1' fsspec pyparsing tenacity cachetools \
    zstandard pyarrow sortedcontainers python-dateutil

  # pyroaring: a compiled extension, built here from source with the Cython just installed.
  export_tree "$pyroaring_src" . "$cache/build/pyroaring"
  pip_install --no-build-isolation "$cache/build/pyroaring"

  # PyIceberg: built from its source tree as pip builds it (setup.py compiles its Cython Avro decoder,
  # as in its published wheels). --no-deps: its dependencies are above, pyroaring built here, and
  # strictyaml stood in below.
  export_tree "$pyiceberg_src" . "$cache/build/pyiceberg"
  pip_install --no-deps --no-build-isolation "$cache/build/pyiceberg"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

  # strictyaml only parses ~/.pyiceberg.yaml, which the interop reads never use (they open tables from
  # their metadata file): a stand-in that refuses, so a config file cannot be silently ignored.
  if ! "$venv/bin/python" -c 'import strictyaml' 2>/dev/null; then
    cat >"$site/strictyaml.py" <<'PY'
"""Stand-in for strictyaml in floe's PyIceberg interop venv: PyIceberg imports it only to read .pyiceberg.yaml."""


def load(*_args, **_kwargs):
    raise RuntimeError("floe's PyIceberg interop venv has no strictyaml: remove .pyiceberg.yaml or unset PYICEBERG_HOME")
PY
  fi
  "$venv/bin/python" -c "$check" >/dev/null || fail "the venv at $venv does not import pyiceberg and pyroaring"
  echo "$stamp" >"$cache/stamp"
fi

echo "venv: $venv/bin/python"
echo "sources: $stamp"
"$venv/bin/python" -c "$check"
