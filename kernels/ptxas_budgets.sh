#!/usr/bin/env bash
# ptxas_budgets.sh - register, local-memory (stack, spills) and shared-memory
# budgets of every kernel of kernels/*.cu, from `nvcc -Xptxas -v`, checked
# against kernels/ptxas_budgets.txt. Fails (exit 1) when a kernel goes over a
# budget or has none; without nvcc it says so and exits 0 (CI machines
# without the CUDA toolkit). Prints today's numbers either way. The .cu files
# compile here with host and device warnings as errors, so CI checks the nvcc
# build of the kernels too while its test build runs them under emulation.
#
#   bash kernels/ptxas_budgets.sh [ARCH...]      (default: sm_80 sm_90)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then
  echo "ptxas budgets: no nvcc, not checked"
  exit 0
fi
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(sm_80 sm_90)
# the constants gz_block.h takes from gzcoll.h, as kernels/CMakeLists.txt passes them
defs=()
for c in GZ_BLOCK GZ_CHUNK_DEFAULT; do
  v=$(sed -n "s/^#define $c  *\([^ ]*\).*/\1/p" "$here/../libgzcoll/include/gzcoll.h")
  if [ -z "$v" ]; then
    echo "ptxas budgets: no '#define $c VALUE' in libgzcoll/include/gzcoll.h" >&2
    exit 1
  fi
  defs+=("-D$c=$v")
done
out=$(mktemp)
one=$(mktemp)
trap 'rm -f "$out" "$one"' EXIT
for arch in "${archs[@]}"; do
  for cu in "$here"/*.cu; do
    if ! "$nvcc" -std=c++17 -arch="$arch" -c -Werror all-warnings \
      -Xcompiler=-Wall,-Wextra,-Werror "${defs[@]}" -Xptxas -v -o /dev/null "$cu" >"$one" 2>&1; then
      cat "$one" >&2
      echo "ptxas budgets: $(basename "$cu") does not compile for $arch" >&2
      exit 1
    fi
    sed "s/^/$arch /" "$one" >>"$out"
  done
done
# one line per kernel: arch name registers stack spill(stores+loads) smem
awk '
  / Compiling entry function / {
    arch = $1; name = $0; sub(/.*entry function ./, "", name); sub(/. for .*/, "", name)
    next }
  / bytes stack frame/ && name != "" {
    stack = $2; spill = $6 + $10; next }
  / Used [0-9]+ registers/ && name != "" {
    for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1)
    smem = 0
    for (i = 1; i <= NF; i++) if ($i == "smem," || $i == "smem") smem = $(i - 2)
    print arch, name, regs, stack, spill, smem; name = "" }' "$out" |
  while read -r arch mangled regs stack spill smem; do
    case $mangled in *cub*) continue ;; esac # CUB's own kernels
    pretty=$(echo "$mangled" | c++filt -p | awk '{print $NF}')
    echo "$arch $pretty $regs $stack $spill $smem"
  done | sort -u >"$out.k"
printf '%-6s %-28s %5s %6s %6s %6s   budget (regs stack spill smem)\n' arch kernel regs \
  stack spill smem
fail=0
while read -r arch k regs stack spill smem; do
  b=$(awk -v k="$k" '$1 == k { print $2, $3, $4, $5 }' "$here/ptxas_budgets.txt")
  verdict=ok
  if [ -z "$b" ]; then
    verdict="NO BUDGET"
    fail=1
  else
    read -r br bs bp bm <<<"$b"
    if [ "$regs" -gt "$br" ] || [ "$stack" -gt "$bs" ] || [ "$spill" -gt "$bp" ] ||
      [ "$smem" -gt "$bm" ]; then
      verdict="OVER BUDGET"
      fail=1
    fi
  fi
  printf '%-6s %-28s %5s %6s %6s %6s   %s  %s\n' "$arch" "$k" "$regs" "$stack" "$spill" \
    "$smem" "${b:--}" "$verdict"
done <"$out.k"
rm -f "$out.k"
[ $fail -eq 0 ] && echo "ptxas budgets: all kernels within budget" ||
  echo "ptxas budgets: FAILED (kernels/ptxas_budgets.txt)"
exit $fail
