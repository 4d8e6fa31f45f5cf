#!/usr/bin/env bash
# Audit what is installed in the project's virtualenv for known vulnerabilities (pip-audit).
#
#   .ci/audit.sh            # uses .venv; VENV=path/to/venv to audit another one
#   AUDIT_SERVICE=osv .ci/audit.sh   # vulnerability source: pypi (default) or osv
#
# Steps: `pip freeze` of the venv into .ci-audit/requirements.lock (the lock of what was really
# installed, kept as a CI artifact), then `pip-audit -r LOCK --no-deps` against it, report in
# .ci-audit/report.json and .ci-audit/report.txt.
#
# Where pip-audit finds nothing (a PyPI proxy that serves project pages but answers 404 for the
# per-release pages pip-audit reads, as here), .ci/audit_newest.py audits every package installed at
# its project's newest release from the project page's vulnerability list, and lists the rest as
# not audited (report in .ci-audit/report-newest.json).
#
# Always exits 0 — whether CI fails on findings is the lead's call — but says clearly, on the last
# line, which of these happened:
#   audit: OK — N packages audited, no known vulnerabilities
#   audit: FINDINGS — K known vulnerabilities in P packages (listed above)
#   audit: PARTIAL — (fallback) no known vulnerabilities in the packages it could audit; the rest listed
#   audit: NOT RUN — <why> (the vulnerability database could not be reached, pip-audit missing, …)
# A run that could not look up any package is reported as NOT RUN, never as "no vulnerabilities".
set -uo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PY="$VENV/bin/python"
SERVICE=${AUDIT_SERVICE:-pypi}
OUT=.ci-audit
mkdir -p "$OUT"
LOCK="$OUT/requirements.lock"
JSON="$OUT/report.json"
TXT="$OUT/report.txt"
rm -f "$JSON" "$TXT"

not_run() {
  echo "::warning::vulnerability audit not run: $1" >&2
  echo "audit: NOT RUN — $1"
  exit 0
}

[ -x "$PY" ] || not_run "no virtualenv at $VENV (run make install-dev first)"
"$PY" -m pip_audit --version >/dev/null 2>&1 || not_run "pip-audit is not installed in $VENV (it is in the dev extra: make install-dev)"

# The lock: every installed distribution pinned, the project itself (editable) left out.
if ! "$PY" -m pip freeze --exclude-editable --disable-pip-version-check 2>/dev/null \
    | grep -v -E '^(-e |#|gpu-advisor==)' > "$LOCK"; then
  not_run "pip freeze failed"
fi
echo "audit: $(wc -l < "$LOCK" | tr -d ' ') installed packages locked in $LOCK"

"$PY" -m pip_audit -r "$LOCK" --no-deps --disable-pip --progress-spinner off -s "$SERVICE" \
  -f json -o "$JSON" >"$TXT" 2>&1
status=$?

# pip-audit reads PyPI's per-release pages; where those are missing (a proxy that serves only project
# pages) the fallback audits every package installed at its newest release from the project pages.
fallback() {
  echo "audit: pip-audit could not look up the packages ($1); falling back to PyPI's project pages"
  "$PY" .ci/audit_newest.py "$LOCK" --json "$OUT/report-newest.json"
  exit 0
}

if [ ! -s "$JSON" ]; then
  reason=$(grep -E -o "Failed to resolve '[^']+'|Connection refused|Max retries exceeded|timed out|SSLError|ProxyError" "$TXT" | head -1)
  cat "$TXT" | tail -5
  [ "$SERVICE" = pypi ] && fallback "no report, exit $status${reason:+: $reason}"
  not_run "pip-audit produced no report (exit $status${reason:+: $reason}); the $SERVICE vulnerability service is probably unreachable from here"
fi

(
"$PY" - "$JSON" "$SERVICE" <<'PY'
import json
import sys

report = json.load(open(sys.argv[1], encoding="utf-8"))
service = sys.argv[2]
deps = report.get("dependencies", [])
skipped = [d for d in deps if d.get("skip_reason")]
audited = [d for d in deps if not d.get("skip_reason")]
vulnerable = [d for d in audited if d.get("vulns")]
if deps and not audited:
    reasons = sorted({d["skip_reason"].split(":")[0] for d in skipped})
    if service == "pypi":
        print(f"none of the {len(deps)} packages found ({'; '.join(reasons)})")
        sys.exit(3)  # the shell falls back to the project pages
    print(f"audit: NOT RUN — none of the {len(deps)} packages could be looked up in the {service} vulnerability "
          f"database ({'; '.join(reasons)}); it is probably unreachable from here. "
          "Run .ci/audit.sh where PyPI or api.osv.dev is reachable.")
    print(f"::warning::vulnerability audit not run: the {service} service could not be reached", file=sys.stderr)
    sys.exit(0)
for d in vulnerable:
    for v in d["vulns"]:
        fixes = ", ".join(v.get("fix_versions") or []) or "no fixed version yet"
        aliases = ", ".join(v.get("aliases") or [])
        print(f"  {d['name']} {d.get('version', '?')}: {v.get('id')}{f' ({aliases})' if aliases else ''} — fixed in {fixes}")
if skipped:
    print(f"  ({len(skipped)} packages could not be audited, e.g. {skipped[0]['name']}: {skipped[0]['skip_reason']})")
if vulnerable:
    count = sum(len(d["vulns"]) for d in vulnerable)
    print(f"audit: FINDINGS — {count} known vulnerabilities in {len(vulnerable)} of {len(audited)} audited packages "
          "(listed above; report in .ci-audit/report.json)")
    print(f"::warning::pip-audit: {count} known vulnerabilities", file=sys.stderr)
else:
    print(f"audit: OK — {len(audited)} packages audited against {service}, no known vulnerabilities")
PY
) | tee "$OUT/summary.txt"
[ "${PIPESTATUS[0]}" -eq 3 ] && fallback "$(head -1 "$OUT/summary.txt")"
exit 0
