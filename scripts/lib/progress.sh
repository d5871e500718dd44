# Sourced by scripts/setup.sh. `with_progress LABEL ESTIMATE_SECONDS LOG -- COMMAND...` runs COMMAND with
# its output in LOG and, every CORTEX_PROGRESS_SECONDS (default 10), prints one line on stderr: the time
# so far and an estimate of what is left — from the build's own "[N/M]" (ninja) or "[ NN%]" (make)
# counters when it prints them, else from ESTIMATE_SECONDS. Returns COMMAND's exit code.

_progress_clock() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# The build's progress in per mille (0-1000) from its last counter line in LOG, or nothing.
_progress_permille() {
  local last
  last="$(grep -aoE '\[ *[0-9]+/[0-9]+\]|\[ *[0-9]+%\]' "$1" 2>/dev/null | tail -1 | tr -d '[] ')" || true
  case "$last" in
    */*) local n="${last%/*}" total="${last#*/}"
         [ "$total" -gt 0 ] 2>/dev/null && echo $((n * 1000 / total)) ;;
    *%) echo $((${last%\%} * 10)) ;;
  esac
  return 0  # no counter yet is not a failure (setup.sh runs under set -e)
}

with_progress() {
  local label="$1" estimate="$2" log="$3"
  shift 3
  [ "${1:-}" = "--" ] && shift
  local every="${CORTEX_PROGRESS_SECONDS:-10}" started now elapsed permille left pid
  started=$(date +%s)
  "$@" >"$log" 2>&1 &
  pid=$!
  # ESTIMATE is seconds, or a range LOW-HIGH (said as such; the countdown without counters uses HIGH)
  local usually="about $(( (${estimate##*-} + 59) / 60 )) min"
  case "$estimate" in
    *-*) usually="$(( ${estimate%-*} / 60 ))-$(( (${estimate#*-} + 59) / 60 )) min on 2 cores"
         estimate="${estimate#*-}" ;;
  esac
  echo "$label: started (usually $usually; output in $log)" >&2
  while kill -0 "$pid" 2>/dev/null; do
    local waited=0
    while [ "$waited" -lt "$every" ] && kill -0 "$pid" 2>/dev/null; do
      sleep 1
      waited=$((waited + 1))
    done
    kill -0 "$pid" 2>/dev/null || break
    now=$(date +%s)
    elapsed=$((now - started))
    permille="$(_progress_permille "$log")"
    if [ -n "$permille" ] && [ "$permille" -gt 20 ]; then
      left=$((elapsed * (1000 - permille) / permille))
      echo "$label: $(_progress_clock "$elapsed") so far, $((permille / 10))% compiled, about $(_progress_clock "$left") left" >&2
    elif [ "$elapsed" -lt "$estimate" ]; then
      echo "$label: $(_progress_clock "$elapsed") so far, about $(_progress_clock $((estimate - elapsed))) left" >&2
    else
      echo "$label: $(_progress_clock "$elapsed") so far, taking longer than usual, still working" >&2
    fi
  done
  local rc=0
  wait "$pid" || rc=$?
  elapsed=$(($(date +%s) - started))
  if [ "$rc" = 0 ]; then
    echo "$label: done in $(_progress_clock "$elapsed")" >&2
  else
    echo "$label: failed after $(_progress_clock "$elapsed") (exit $rc); the end of $log:" >&2
    tail -n 15 "$log" >&2 || true
  fi
  return "$rc"
}
