#!/bin/sh
# check_outfile.sh — output-file safety, end to end through
# dlrmc: no temporary survives SIGINT, SIGTERM or SIGHUP, the table's nor
# any timeline's; a SIGKILLed run's temporary names its process and the
# next run to the same path removes it (and keeps one whose process
# lives); a replaced file keeps its mode (and, as root, its owner); a
# symbolic link's target is written and the link stays; a failed write to
# standard output is exit 1 for every command; an empty output name is
# exit 2.
# Usage: check_outfile.sh DLRMC STUDY OUTDIR
set -u
dlrmc=$1 study=$2 out=$3/outfile
rm -rf "$out"
mkdir -p "$out"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
temps() { find "$1" -name '*.tmp-*' | wc -l; }
# A background job of a non-interactive shell starts with SIGINT ignored
# (and dlrmc keeps an ignored signal ignored): restore the defaults.
launch="env --default-signal=INT,TERM,HUP"
$launch true 2>/dev/null || launch=""
# Waits (up to 60 s) until file pattern $1 matches: the run is writing.
await() {
  i=0
  while ! ls -a $1 >/dev/null 2>&1 && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
}
# Sends $2 to pid $1 and waits up to 5 s for it to end.
stop() {
  kill -s "$2" "$1"
  i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 "$1" 2>/dev/null; then
    bad "SIG$2 did not end dlrmc in 5 s"
    kill -s KILL "$1"
  fi
  wait "$1" 2>/dev/null
}

# A study that runs for minutes: the batch-size range has 156,000 points.
big="$out/big.yaml"
sed 's/^  training.batch_size: .*/  training.batch_size: {from: 64, to: 10000000, step: 64}/' \
  "$study" > "$big"
grep -q 'to: 10000000' "$big" || { echo "FAIL: $study has no batch_size sweep"; exit 1; }

# 1. Signals: every temporary is removed (12 runs: 3 signals x 2 job
# counts x 2 delays after the first timeline, with the table and the
# timelines being written).
sigs="INT TERM HUP"
[ -n "$launch" ] || sigs="TERM HUP" # no env --default-signal: SIGINT stays ignored
for sig in $sigs; do
  for jobs in 1 2; do
    for delay in 0 0.4; do
      d="$out/sig-$sig-$jobs-$delay"
      mkdir -p "$d"
      $launch "$dlrmc" run "$big" -o "$d/out.csv" --timeline "$d/tl" \
        --jobs "$jobs" 2>/dev/null &
      pid=$!
      await "$d/tl/*.json"
      sleep "$delay"
      stop "$pid" "$sig"
      n=$(ls "$d/tl" 2>/dev/null | wc -l)
      [ "$n" -gt 0 ] || bad "SIG$sig jobs $jobs: no timeline written in 60 s"
      [ -e "$d/out.csv" ] && bad "SIG$sig jobs $jobs: a partial out.csv was left"
      t=$(temps "$d")
      [ "$t" -eq 0 ] && continue
      bad "SIG$sig jobs $jobs delay $delay: $t temporary file(s) left:"
      find "$d" -name '*.tmp-*' | head -3
    done
  done
done

# 2. SIGKILL: the temporary names the pid; the next run removes it, but not
# one whose process is alive (this shell's).
d="$out/kill"
mkdir -p "$d"
"$dlrmc" run "$big" -o "$d/out.csv" 2>/dev/null &
pid=$!
await "$d/.out.csv.tmp-*"
stop "$pid" KILL
ls -a "$d" | grep -q "^\.out\.csv\.tmp-$pid-" ||
  bad "SIGKILL: no .out.csv.tmp-$pid-* temporary (found: $(ls -a "$d" | tr '\n' ' '))"
live="$d/.out.csv.tmp-$$-abcdef"
: > "$live"
"$dlrmc" run "$study" -o "$d/out.csv" || bad "the run after SIGKILL failed"
ls -a "$d" | grep -q "^\.out\.csv\.tmp-$pid-" &&
  bad "the next run did not remove the dead run's temporary"
[ -e "$live" ] || bad "the next run removed a live process's temporary"
rm -f "$live"

# 3. Mode (and owner, as root) of a replaced file.
f="$out/mode.csv"
echo old > "$f"
chmod 600 "$f"
if [ "$(id -u)" = 0 ]; then chown 65534:65534 "$f"; fi
"$dlrmc" run "$study" -o "$f" || bad "run -o mode.csv failed"
[ "$(stat -c %a "$f")" = 600 ] || bad "mode 600 became $(stat -c %a "$f")"
if [ "$(id -u)" = 0 ]; then
  [ "$(stat -c %u:%g "$f")" = 65534:65534 ] ||
    bad "owner 65534:65534 became $(stat -c %u:%g "$f")"
fi
grep -q '^old$' "$f" && bad "mode.csv was not replaced"

# 4. Symbolic links: the target is written, the link stays (relative,
# chained and dangling links).
mkdir -p "$out/links/sub"
echo old > "$out/links/sub/real.csv"
ln -s sub/real.csv "$out/links/link.csv"
ln -s link.csv "$out/links/chain.csv"
ln -s sub/new.csv "$out/links/dangling.csv"
for l in link chain dangling; do
  "$dlrmc" run "$study" -o "$out/links/$l.csv" || bad "run -o $l.csv failed"
  [ -L "$out/links/$l.csv" ] || bad "$l.csv is no longer a symbolic link"
done
grep -q '^old$' "$out/links/sub/real.csv" && bad "the link's target was not written"
[ -s "$out/links/sub/new.csv" ] || bad "the dangling link's target was not created"
[ "$(temps "$out/links")" -eq 0 ] || bad "temporaries left beside the links"

# 5. A failed write to standard output is exit 1, for every command.
if [ -w /dev/full ]; then
  for cmd in "check $study" "run $study" "help" "help run" "--help" \
             "--version" "gpus" "kernel gemm m=64 n=64 k=64 --gpu V100" \
             "graph $study" "explain $study"; do
    # shellcheck disable=SC2086
    "$dlrmc" $cmd >/dev/full 2>/dev/null
    rc=$?
    [ "$rc" = 1 ] || bad "dlrmc $cmd >/dev/full exited $rc, not 1"
  done
fi

# 6. An empty output name is a usage error (exit 2).
for cmd in "run $study -o" "run $study --output" "graph $study -o" \
           "run $study --timeline" "kernel gemm m=1 n=1 k=1 --gpu V100 -o"; do
  # shellcheck disable=SC2086
  "$dlrmc" $cmd '' >/dev/null 2>&1
  rc=$?
  [ "$rc" = 2 ] || bad "dlrmc $cmd '' exited $rc, not 2"
done
"$dlrmc" run "$study" --output= >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || bad "dlrmc run --output= exited $rc, not 2"

[ "$fail" = 0 ] && echo "output files: signals, SIGKILL leftovers, mode, owner, links, stdout errors, empty names all fine"
exit "$fail"
