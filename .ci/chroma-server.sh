#!/usr/bin/env bash
# Start a throw-away chromadb server on 127.0.0.1 for the retrieval tests, wait for its heartbeat,
# and export GPU_ADVISOR_TEST_CHROMA_URL. Meant to be *sourced* by .ci/run (it registers an EXIT
# trap that stops the server and deletes its data); it can also be run directly to try it out:
#
#     source .ci/chroma-server.sh        # then: .venv/bin/pytest tests/test_knowledge_search.py
#
# Settings: CHROMA_TEST_PORT (default 8765), CHROMA_TEST_WAIT_S (default 60).

_chroma_ci_main() {
  local root port wait_s chroma data log url deadline
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  port="${CHROMA_TEST_PORT:-8765}"
  wait_s="${CHROMA_TEST_WAIT_S:-60}"
  chroma="$root/.venv/bin/chroma"
  [ -x "$chroma" ] || chroma="$(command -v chroma || true)"
  if [ -z "$chroma" ]; then
    echo "chroma-server: no 'chroma' executable (pip install chromadb)" >&2
    return 1
  fi
  url="http://127.0.0.1:${port}"
  if _chroma_ci_alive "$url"; then
    echo "chroma-server: something already answers on $url; refusing to reuse it" >&2
    return 1
  fi
  data="$(mktemp -d "${TMPDIR:-/tmp}/gpu-advisor-chroma-ci.XXXXXX")"
  log="$data.log"
  ANONYMIZED_TELEMETRY=False "$chroma" run --host 127.0.0.1 --port "$port" --path "$data" >"$log" 2>&1 &
  CHROMA_CI_PID=$!
  CHROMA_CI_DATA="$data"
  CHROMA_CI_LOG="$log"
  trap _chroma_ci_stop EXIT
  deadline=$((SECONDS + wait_s))
  until _chroma_ci_alive "$url"; do
    if ! kill -0 "$CHROMA_CI_PID" 2>/dev/null; then
      echo "chroma-server: server exited during start-up; log follows" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "chroma-server: no heartbeat from $url after ${wait_s}s; log follows" >&2
      tail -n 30 "$log" >&2
      _chroma_ci_stop
      return 1
    fi
    sleep 0.5
  done
  export GPU_ADVISOR_TEST_CHROMA_URL="$url"
  echo "chroma-server: up at $url (pid $CHROMA_CI_PID, data $data)"
}

_chroma_ci_alive() {
  # v2 API first (chromadb >= 1.0), then the v1 path of older servers
  local body
  for path in /api/v2/heartbeat /api/v1/heartbeat; do
    if command -v curl >/dev/null 2>&1; then
      body="$(curl -fsS --max-time 2 "$1$path" 2>/dev/null)" || continue
    else
      body="$(python3 - "$1$path" 2>/dev/null <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())
PY
)" || continue
    fi
    case "$body" in *heartbeat*) return 0 ;; esac
  done
  return 1
}

_chroma_ci_stop() {
  if [ -n "${CHROMA_CI_PID:-}" ] && kill -0 "$CHROMA_CI_PID" 2>/dev/null; then
    kill "$CHROMA_CI_PID" 2>/dev/null || true
    wait "$CHROMA_CI_PID" 2>/dev/null || true
  fi
  if [ -n "${CHROMA_CI_DATA:-}" ]; then
    rm -rf "$CHROMA_CI_DATA" "${CHROMA_CI_LOG:-}" || true
  fi
  CHROMA_CI_PID=""
  CHROMA_CI_DATA=""
  return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  # run directly: start, report, then keep the server until Ctrl-C
  set -u
  _chroma_ci_main || exit 1
  echo "export GPU_ADVISOR_TEST_CHROMA_URL=$GPU_ADVISOR_TEST_CHROMA_URL   # Ctrl-C stops the server"
  wait "$CHROMA_CI_PID"
else
  _chroma_ci_main
fi
