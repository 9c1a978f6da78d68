#!/usr/bin/env bash
# Turn the CSV that benches/matrix wrote into DIR/report.md and PNG plots
# (gnuplot). Every figure that matters is a ratio of two cells measured in
# the same guest boot, side by side.
#   benches/report.sh DIR
set -euo pipefail
dir=${1:?usage: benches/report.sh DIR}
m=$dir/matrix.csv d=$dir/doublewrite.csv r=$dir/report.md
[ -f "$m" ] && [ -f "$d" ] || { echo "error: no matrix.csv/doublewrite.csv in $dir" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "error: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 1; }
# Rows of a CSV below its header: a run of some phases leaves these two
# empty.
data_rows() {
	awk 'END { print (NR > 0 ? NR - 1 : 0) }' "$1"
}
fio_rows=$(data_rows "$m") dw_rows=$(data_rows "$d")

# Shared by the awk programs below: ratio, size label, and the median of
# the values A[key, 1..cnt[key]].
AWK_LIB='
function r(a, b) { return b > 0 ? a / b : 0 }
function sz(b) { return b >= 1048576 ? sprintf("%d MiB", b / 1048576) : sprintf("%d KiB", b / 1024) }
function med(A, key,   a, i, j, m, t) {
	m = cnt[key]
	for (i = 1; i <= m; i++) a[i] = A[key, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return m ? (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) : 0
}
# Mainline 7.2, atomic/plain on NVMe, queue depth 1 (reference §8), by
# "DSYNC,SIZE"; 0 where it was not measured.
function mainline(k) {
	return k == "0,4096" ? 0.99 : k == "1,4096" ? 0.95 : k == "0,16384" ? 0.18 : k == "1,16384" ? 0.08 : k == "0,65536" ? 0.17 : k == "1,65536" ? 0.10 : 0
}
# The median over repetitions of A[ka, i] / A[kb, i]: each repetition ran
# its two cells back to back, so the pairs cancel the drift between
# repetitions that a ratio of medians keeps.
function medr(A, ka, kb,   R, i, m) {
	m = cnt[ka] < cnt[kb] ? cnt[ka] : cnt[kb]
	for (i = 1; i <= m; i++) R["r", i] = A[kb, i] > 0 ? A[ka, i] / A[kb, i] : 0
	cnt["r"] = m
	return med(R, "r")
}'

# ratio table DEVICE QD: size, plain, atomic, ratio, path; the same with dsync;
# latency and CPU. Prints markdown; also DIR/ratio-DEVICE-qdQD.dat for plots.
ratio_table() {
	local dev=$1 qd=$2
	awk -F, -v dev="$dev" -v qd="$qd" -v dat="$dir/ratio-$dev-qd$qd.dat" '
	NR > 1 && $1 == dev && $4 == qd {
		k = $2 "," $3 "," $5; c = ++cnt[k]
		I[k, c] = $7; P50[k, c] = $9; P99[k, c] = $10; CPU[k, c] = $11
		if (!(k in path)) path[k] = $6
		else if (path[k] != $6) path[k] = "mixed"
		if (!($5 in seen)) { seen[$5] = 1; sizes[++n] = $5 }
	}
	'"$AWK_LIB"'
	END {
		print "| size | plain IOPS | atomic IOPS | atomic/plain | path | plain+dsync | atomic+dsync | ratio | p50 µs plain/atomic | p99 µs plain/atomic | CPU µs/write plain/atomic |"
		print "|---|---|---|---|---|---|---|---|---|---|---|"
		print "# size ratio ratio_dsync" > dat
		for (i = 1; i <= n; i++) {
			s = sizes[i]; P = "plain,0," s; A = "atomic,0," s; PD = "plain,1," s; AD = "atomic,1," s
			ip = med(I, P); ia = med(I, A); ipd = med(I, PD); iad = med(I, AD)
			x = medr(I, A, P); xd = medr(I, AD, PD)
			printf "| %s | %d | %d | **%.2f** | %s | %d | %d | **%.2f** | %d / %d | %d / %d | %.0f / %.0f |\n",
				sz(s), ip, ia, x, path[A] (path[AD] != path[A] ? "/" path[AD] : ""),
				ipd, iad, xd,
				med(P50, P), med(P50, A), med(P99, P), med(P99, A), med(CPU, P), med(CPU, A)
			printf "%d %.3f %.3f\n", s / 1024, x, xd > dat
		}
	}' "$m"
}

# The software path on NVMe as mainline was measured (reference §8), with
# staging kept (device nvme) and freed (nvme-nokeep), at queue depth QD.
nvme_table() {
	awk -F, -v qd="$1" '
	NR > 1 && ($1 == "nvme" || $1 == "nvme-nokeep") && $4 == qd {
		k = $1 "," $2 "," $3 "," $5; V[k, ++cnt[k]] = $7
		if ($1 == "nvme" && $2 == "atomic") path[$3 "," $5] = $6
		if (!($5 in seen)) { seen[$5] = 1; sizes[++n] = $5 }
	}
	'"$AWK_LIB"'
	END {
		print "| size | O_DSYNC | path | plain IOPS | atomic, staging kept | atomic/plain | atomic, staging freed | atomic/plain | kept / freed | mainline atomic/plain (§8, QD 1) |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (d = 0; d <= 1; d++) for (i = 1; i <= n; i++) {
			s = sizes[i]; t = "," d "," s
			p = med(V, "nvme,plain" t); pn = med(V, "nvme-nokeep,plain" t)
			a = med(V, "nvme,atomic" t); an = med(V, "nvme-nokeep,atomic" t)
			x = medr(V, "nvme,atomic" t, "nvme,plain" t)
			xn = medr(V, "nvme-nokeep,atomic" t, "nvme-nokeep,plain" t)
			printf "| %s | %s | %s | %d | %d | **%.2f** | %d | %.2f | %.2f | %s |\n",
				sz(s), d ? "yes" : "no", path[d "," s], p, a, x, an, xn,
				r(x, xn), (qd == 1 && mainline(d "," s)) ? sprintf("%.2f", mainline(d "," s)) : "-"
		}
	}' "$m"
}

# The hardware target: atomic/plain >= 0.97 wherever the path was hw.
hw_check() {
	awk -F, '
	NR > 1 && $1 == "hw" {
		k = $3 "," $4 "," $5; key = $2 "," k; V[key, ++cnt[key]] = $7; keys[k] = 1
		if (!(key in p)) p[key] = $6; else if (p[key] != $6) p[key] = "mixed"
	}
	'"$AWK_LIB"'
	END {
		worst = 9; n = 0
		for (k in keys) {
			if (p["atomic," k] != "hw" || med(V, "plain," k) <= 0) continue
			x = medr(V, "atomic," k, "plain," k); n++
			if (x < worst) { worst = x; wk = k }
		}
		if (!n) {
			print "No fio cell took the hardware path (the fio phase did not run, or no device offered it)."
			exit
		}
		split(wk, w, ",")
		printf "%d cells took the hardware path; the lowest ratio of median IOPS, atomic/plain, is %.3f (dsync %s, QD %s, %d bytes). These 2 s cells swing by tens of percent under TCG (see the CSV); the 0.97 target is judged by the paired cells above.\n",
			n, worst, w[1], w[2], w[3]
	}' "$m"
}

dw_table() {
	awk -F, -v dat="$dir/doublewrite.dat" '
	NR > 1 { k = $1 "," $2 "," $3 "," $4; pps[k] = $7; p99[k] = $9; cpu[k] = $10; path[k] = $5
		 if (!(($3 "," $4) in seen)) { seen[$3 "," $4] = 1; rows[++n] = $3 "," $4 } }
	'"$AWK_LIB"'
	END {
		print "| page | batch | doublewrite pages/s | RWF_ATOMIC, hw device (path) | atomic / doublewrite | doublewrite, sw device | RWF_ATOMIC, software path | atomic / doublewrite | plain, unprotected | p99 µs per batch: doublewrite / hw atomic / sw atomic | CPU µs/page: doublewrite / hw atomic / sw atomic |"
		print "|---|---|---|---|---|---|---|---|---|---|---|"
		print "# page batch hw_ratio sw_ratio" > dat
		for (i = 1; i <= n; i++) {
			split(rows[i], x, ","); s = x[1]; b = x[2]; t = "," s "," b
			D = "hw,doublewrite" t; H = "hw,atomic-dsync" t; SD = "sw,doublewrite" t; S = "sw,atomic-dsync" t; L = "hw,plain-dsync" t
			printf "| %s | %d | %.0f | %.0f (%s) | **%.2f** | %.0f | %.0f (%s) | **%.2f** | %.0f | %d / %d / %d | %.0f / %.0f / %.0f |\n",
				sz(s), b, pps[D], pps[H], path[H], r(pps[H], pps[D]), pps[SD], pps[S], path[S], r(pps[S], pps[SD]),
				pps[L], p99[D], p99[H], p99[S], cpu[D], cpu[H], cpu[S]
			if (b == 1) printf "%d %.3f %.3f\n", s / 1024, r(pps[H], pps[D]), r(pps[S], pps[SD]) > dat
		}
	}' "$d"
}

# The paired (interleaved) cells of abbench, DIR/paired.csv:
#  1 device, 2 path, 3 ranges, 4 a, 5 b, 6 bs, 7 qd, 8 dsync, 9 batch,
# 10 pairs, 11 a_pps, 12 b_pps, 13 ratio, 14 lo, 15 hi, 16 a_cpu, 17 b_cpu,
# 18 slice_ms, 19 threads, 20 a_set, 21 b_set (sysfs values set per side)
# The many-writer cells (ranges "parallel") have a table of their own.
paired_hw_table() {
	awk -F, '
	function verdict(x, lo, hi) {
		if (x >= 0.97) return lo >= 0.97 ? "meets (interval above)" : "meets"
		return hi >= 0.97 ? "below, within noise" : "**MISSES**"
	}
	NR > 1 && $1 == "hw" && $4 == "plain" && $5 == "plain" {
		ctl = sprintf("A/A control (plain against plain, 4 KiB, QD 1): ratio %.3f, 95 %% interval %.3f .. %.3f.", $13, $14, $15)
	}
	NR > 1 && $1 == "hw" && $3 != "parallel" && $4 == "plain" && $5 == "atomic" {
		rows[++n] = $0
		if ($2 != "hw") { nothw++; next }
		nhw++
		if ($13 >= 0.97) met++
		if ($15 < 0.97) missed++
		if (!lw || $13 < lw) { lw = $13; wlo = $14; whi = $15; wk = sprintf("%s, QD %d%s", sz($6), $7, $8 ? ", O_DSYNC" : "") }
	}
	'"$AWK_LIB"'
	END {
		if (ctl) print ctl "\n"
		if (!n) { print "(no paired hardware cells)"; exit }
		printf "%d cells took the hardware path (%d did not); %d have atomic/plain >= 0.97, %d are below with 0.97 inside their interval, %d are below with the whole interval under 0.97. Lowest: %.3f (%.3f .. %.3f) at %s. Target: %s.\n\n",
			nhw, nothw, met, nhw - met - missed, missed, lw, wlo, whi, wk,
			missed ? "MISSED" : (met == nhw ? "met in every cell" : "met within the measurement noise")
		print "| size | QD | O_DSYNC | path | plain writes/s | atomic writes/s | atomic/plain | 95 % interval | CPU µs/write plain / atomic | 0.97 target |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			split(rows[i], f, ",")
			printf "| %s | %d | %s | %s | %.0f | %.0f | **%.3f** | %.3f .. %.3f | %.0f / %.0f | %s |\n",
				sz(f[6]), f[7], f[8] ? "yes" : "no", f[2], f[11], f[12], f[13], f[14], f[15], f[16], f[17],
				f[2] == "hw" ? verdict(f[13], f[14], f[15]) : "(not hw)"
		}
	}' "$1"
}

paired_dw_table() {
	awk -F, '
	'"$AWK_LIB"'
	BEGIN {
		print "| page | batch | device | ranges | atomic path | doublewrite pages/s | RWF_ATOMIC pages/s | atomic / doublewrite | 95 % interval | CPU µs/page doublewrite / atomic |"
		print "|---|---|---|---|---|---|---|---|---|---|"
	}
	NR > 1 && $3 !~ /^model-/ && $4 == "doublewrite" {
		printf "| %s | %d | %s | %s | %s | %.0f | %.0f | **%.2f** | %.2f .. %.2f | %.0f / %.0f |\n",
			sz($6), $9, $1 == "hw" ? "hw (unit up to the page)" : $1 == "nvme" ? "nvme (4 KiB unit)" : $1 " (no atomic unit)", $3, $2,
			$11, $12, $13, $14, $15, $16, $17
	}' "$1"
}

paired_sw_table() {
	awk -F, '
	'"$AWK_LIB"'
	BEGIN {
		print "| device | size | ranges | O_DSYNC | path | plain writes/s | atomic writes/s | atomic/plain | 95 % interval | CPU µs/write plain / atomic | mainline on NVMe (§8) | against mainline |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|"
	}
	NR > 1 && $1 != "hw" && $3 != "parallel" && $3 !~ /^model-/ && $4 == "plain" && $5 == "atomic" {
		m = $1 ~ /^nvme/ ? mainline($8 "," $6) : 0
		printf "| %s | %s | %s | %s | %s | %.0f | %.0f | **%.3f** | %.3f .. %.3f | %.0f / %.0f | %s | %s |\n",
			$1, sz($6), $3, $8 ? "yes" : "no", $2, $11, $12, $13, $14, $15, $16, $17,
			m ? sprintf("%.2f", m) : "-", m ? sprintf("%.2fx", $13 / m) : "-"
	}' "$1"
}

paired_parallel_table() {
	awk -F, '
	'"$AWK_LIB"'
	BEGIN {
		print "| device | size | writers | QD | A | B | A pages/s | B pages/s | B / A | 95 % interval | CPU µs/page A / B |"
		print "|---|---|---|---|---|---|---|---|---|---|---|"
	}
	function side(mode, set) {
		if (set == "1") return mode " (one at a time)"
		if (set == "0") return mode " (range locks)"
		return mode
	}
	NR > 1 && $3 == "parallel" {
		printf "| %s | %s | %d | %d | %s | %s | %.0f | %.0f | **%.3f** | %.3f .. %.3f | %.0f / %.0f |\n",
			$1 == "hw" ? "hw (hardware path)" : $1 " (software path)", sz($6), $19, $7,
			side($4, $20), side($5 == "atomic" ? "atomic " $2 : $5, $21), $11, $12, $13, $14, $15, $16, $17
	}' "$1"
}

# Device model cells (ranges model-raw|dc|client) against issue 19's goals.
paired_models_table() {
	awk -F, '
	'"$AWK_LIB"'
	BEGIN {
		print "| device | size | writers | A | B | model | A pages/s | B pages/s | B / A | 95 % interval | goal |"
		print "|---|---|---|---|---|---|---|---|---|---|---|"
	}
	NR > 1 && $3 ~ /^model-/ {
		model = substr($3, 7)
		if ($4 == "plain") goal = $1 == "tear-hw" ? 0.97 : 0.36
		else goal = $1 == "tear-hw" ? 1.9 : 1.0
		if (model == "raw" && $4 == "doublewrite") g = "(models decide)"
		else if (model != "raw" && $4 == "plain" && $1 == "tear-sw") g = "(raw decides)"
		else g = sprintf("%s %.2f", $13 >= goal ? "meets" : ($15 >= goal ? "within noise of" : "**misses**"), goal)
		printf "| %s | %s | %d | %s | %s | %s | %.0f | %.0f | **%.3f** | %.3f .. %.3f | %s |\n",
			$1 " (" $2 ")", sz($6), $19, $4 ($9 > 1 ? " x" $9 : ""), $5, model, $11, $12, $13, $14, $15, g
	}' "$1"
}

# The devices the run's CSVs name, each with what it is (benches/matrix).
devices_used() {
	local f names="" dev out=""
	for f in "$m" "$d" "$dir/paired.csv"; do
		[ -f "$f" ] && names+=" $(awk -F, 'NR > 1 { print $1 }' "$f" | tr '\n' ' ')"
	done
	# redo.csv names its device model in the first column.
	[ -f "$dir/redo.csv" ] && names+=" redo"
	for dev in $(printf '%s\n' $names | awk 'NF && !seen[$0]++'); do
		case $dev in
		hw|sw) out+="${out:+; }$dev (scsi_debug, delay=0, RAM)" ;;
		nvme|nvme-nokeep) out+="${out:+; }$dev (QEMU NVMe, 4 KiB atomic unit)" ;;
		tear-*) out+="${out:+; }$dev (tearblk, RAM, raw and under the device models)" ;;
		redo) out+="${out:+; }the redo-log cells' two tearblk disks" ;;
		*) out+="${out:+; }$dev" ;;
		esac
	done
	echo "${out:-none}"
}

# Which kinds of rows the run wrote, for a run of some phases only.
phases_run() {
	local p=""
	[ "$fio_rows" -gt 0 ] && p+=" fio"
	[ "$dw_rows" -gt 0 ] && p+=" doublewrite"
	[ -f "$dir/paired.csv" ] && p+=" paired"
	[ -f "$dir/redo.csv" ] && p+=" redo"
	echo "${p# }"
}

plot() { # NAME TITLE YLABEL series...
	local name=$1 title=$2 ylabel=$3
	shift 3
	gnuplot 2>"$dir/$name.gnuplot.log" <<-GP || echo "warning: plot $name failed (see $dir/$name.gnuplot.log)" >&2
		set terminal pngcairo size 900,500 noenhanced
		set output "$dir/$name.png"
		set title "$title"
		set logscale x 2
		set xlabel "write size (KiB)"
		set ylabel "$ylabel"
		set grid
		set key outside right
		plot $*
	GP
}

{
	echo "# untorn benchmark report"
	echo
	echo "Run $(basename "$dir") on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
		"$(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo) RAM;" \
		"$(qemu-system-x86_64 --version | head -1), **TCG software emulation (no KVM)**," \
		"guest kernel $(sed -n 's/.*Linux version \([^ ]*\).*/\1/p' "$dir/console.log" 2>/dev/null | head -1) without debug options," \
		"$(sed -n 's/.*untorn_cpus=\([0-9]*\).*/\1/p' "$dir/console.log" 2>/dev/null | head -1) vCPUs. Devices: $(devices_used)."
	echo
	echo "**Only the ratios carry meaning.** Under TCG every instruction is emulated,"
	echo "so absolute IOPS and latencies say nothing about real hardware; each ratio"
	echo "compares two cells measured back to back in the same boot, on the same file."
	echo "Raw results: \`matrix.csv\`, \`doublewrite.csv\`, \`paired.csv\` next to this report."
	reps=$(awk -F, 'NR > 1 && $12 > r { r = $12 } END { print r + 0 }' "$m")
	if [ "$reps" -gt 0 ]; then
		echo "Each fio cell ran $reps times, plain and atomic alternating; the tables show medians,"
		echo "and each atomic/plain ratio is the median of the ratios of the two cells of one"
		echo "repetition, measured back to back."
	else
		echo "This run measured no fio cells (its phases: $(phases_run)); only the paired"
		echo "and model tables below carry figures."
	fi
	echo "Columns: IOPS and MiB/s from fio; p50/p99 completion latency; CPU µs/write ="
	echo "all non-idle guest CPU time over the cell divided by the writes (kworkers and"
	echo "log I/O included). \"path\" is what the filesystem's atomic write counters say"
	echo "the atomic writes of the cell took (hw, sw, or mixed)."
	echo
	p=$dir/paired.csv
	if [ -f "$p" ]; then
		echo "## The targets, measured in interleaved slices"
		echo
		echo "TCG's speed drifts by tens of percent within seconds, more than the 3 % the"
		echo "hardware target allows, so the targets are decided by \`abbench\`: A and B"
		echo "(plain and atomic writes, or doublewrite and atomic batches) run in"
		echo "alternating $(awk -F, 'NR == 2 { print $18 }' "$p") ms slices, AB BA AB ..., for $(awk -F, 'NR == 2 { printf "%d", $10 * $18 / 500 + 0.5 }' "$p") s per cell, on the"
		echo "same file in the same boot; the ratio is B's pages per second over A's, and the"
		echo "95 % interval comes from resampling the slice pairs (bootstrap). Raw:"
		echo "\`paired.csv\`."
		echo
		awk -F, 'NR > 1 && $2 == "failed" { n++; c = c sprintf("\n- %s: abbench %s", $1, substr($0, index($0, $4))) }
			END { if (n) printf "**%d paired cells failed** (their error is in vm.log):%s\n\n", n, c }' "$p"
		echo "### Hardware atomic writes against plain O_DIRECT (XFS 4 KiB on scsi_debug, hardware unit 4 KiB up to the largest size in the table)"
		echo
		paired_hw_table "$p"
		echo
		echo "### A durable page: doublewrite against RWF_ATOMIC (target 1.8x on the hardware path)"
		echo
		echo "Batch 1: doublewrite area, fdatasync, in place, fdatasync, against one"
		echo "RWF_ATOMIC|RWF_DSYNC write. Batch 32: 32 pages to the doublewrite area,"
		echo "fdatasync, 32 in place, fdatasync, against 32 RWF_ATOMIC writes and one"
		echo "fdatasync."
		echo
		paired_dw_table "$p"
		echo
		echo "### The software path against plain O_DIRECT, queue depth 1"
		echo
		echo "sw: XFS on scsi_debug without atomic support; nvme: XFS on the NVMe disk"
		echo "(4 KiB unit, so 16 and 64 KiB take the software path), staging kept (the"
		echo "default); nvme-nokeep: keep_staging=0. Each size starts from a new file:"
		echo "\"fresh\" cells write mostly ranges no atomic write has touched (their"
		echo "staging is allocated); then one sequential atomic pass covers the file and"
		echo "the \"rewritten\" cells find every range written before, as a database"
		echo "rewrites its pages (with keep_staging their staging is ready). Mainline's"
		echo "ratios are from 15 s fio cells run one after the other (reference §8, noise"
		echo "about ±15 %); mainline frees and allocates on every write, fresh or not."
		echo
		paired_sw_table "$p"
		echo
		if grep -q ',model-' "$p"; then
			echo "### Device models"
			echo
			echo "XFS 4 KiB with reflink on tearblk, the page file rewritten once:"
			echo "tear-hw has a 4..64 KiB atomic unit (16 KiB pages on the hardware"
			echo "path), tear-sw a 4 KiB unit (the software path). raw: the emulated"
			echo "device, commands complete at once; dc and client: tearblk's timing"
			echo "model with the figures of a datacenter NVMe (power-loss protection)"
			echo "and a client NVMe (volatile cache) multiplied by the emulation's CPU"
			echo "slowdown (docs/device-models.md); model parameters as set, in ns and"
			echo "MB/s:"
			echo
			[ -f "$dir/models.csv" ] && sort -u "$dir/models.csv" | awk -F, '$1 != "model" { printf "- %s: CPU factor %s, read %s, write %s, flush %s, %s MB/s\n", $1, $2, $3, $4, $5, $6 }'
			[ -f "$dir/cpufactor.csv" ] && awk -F, '{ printf "\nThe factor is the guest'"'"'s time over the host'"'"'s for cpufactor'"'"'s kernel workload (%d ns over %d ns); its user-space CRC loop slows down by %.1f only (%d over %d ns), which is why the kernel one is used.\n", $1, $2, $4 ? $3 / $4 : 0, $3, $4 }' "$dir/cpufactor.csv"
			echo
			paired_models_table "$p"
			echo
		fi
		if [ -f "$dir/redo.csv" ] && [ "$(wc -l <"$dir/redo.csv")" -gt 1 ]; then
			echo "### The seed's redo-log case"
			echo
			echo "LSFMM 2025 (seeds/000-article.md): MySQL lost to its doublewrite buffer on"
			echo "XFS with 16 KiB blocks because each redo commit (a 512-byte buffered write"
			echo "and fsync) writes back a whole 16 KiB block. \`redobench\` runs a commit"
			echo "stream beside 16 KiB RWF_ATOMIC page writes, in alternating 200 ms slices"
			echo "on A, XFS with 16 KiB blocks (pages on the hardware path), and B, XFS with"
			echo "4 KiB blocks and reflink (untorn's hybrid), both on tearblk with a 4..64"
			echo "KiB atomic unit; under the raw device and the two device models. B's"
			echo "pages took the paths the counters show."
			echo
			echo "| model | commits/s A (16 KiB blocks) | commits/s B (4 KiB, hybrid) | B / A commits | 95 % interval | commit latency µs A / B | pages/s A | pages/s B | B / A pages | 95 % interval | B's pages hw / sw |"
			echo "|---|---|---|---|---|---|---|---|---|---|---|"
			awk -F, 'NR > 1 { printf "| %s | %.0f | %.0f | **%.2f** | %.2f .. %.2f | %s / %s | %.0f | %.0f | **%.2f** | %.2f .. %.2f | %s / %s |\n", $1, $4, $5, $6, $7, $8, $14, $15, $9, $10, $11, $12, $13, $16, $17 }' "$dir/redo.csv"
			echo
		fi
		if grep -q ',parallel,' "$p"; then
			echo "### Many writers to one file (range locks)"
			echo
			echo "Page writes to one file from several threads (pwritev2, QD 1 each) or"
			echo "one thread at queue depth 32 (io_uring), on a file rewritten once"
			echo "atomically. \"one at a time\": atomic_write/sw_exclusive=1, software"
			echo "atomic writes hold the IOLOCK exclusively and drain the file's direct"
			echo "I/O, as before patch 30; \"range locks\": sw_exclusive=0, the default."
			echo "Slices of 50 ms."
			echo
			paired_parallel_table "$p"
			echo
		fi
	fi
	echo "## Hardware atomic writes against plain O_DIRECT (XFS, device unit 4 KiB .. max), fio cells"
	echo
	hw_check
	for qd in 1 32; do
		echo
		echo "Queue depth $qd ($([ $qd = 1 ] && echo "fio pvsync2" || echo "fio io_uring")):"
		echo
		ratio_table hw $qd
	done
	echo
	echo "## The software path against plain O_DIRECT (XFS on a device without atomic writes)"
	echo
	echo "Every RWF_ATOMIC write stages its data in new blocks and remaps them in one"
	echo "transaction. Since patch 30 a file's software writes run in parallel unless"
	echo "they overlap (range locks; the many-writer table above compares them with"
	echo "the old one-at-a-time behaviour in the same run)."
	for qd in 1 32; do
		echo
		echo "Queue depth $qd:"
		echo
		ratio_table sw $qd
	done
	echo
	echo "## The software path on NVMe, as mainline was measured"
	echo
	echo "XFS on the emulated NVMe disk (4 KiB hardware unit: 16 and 64 KiB atomic"
	echo "writes take the software path), 128 MiB file, the setup of the mainline"
	echo "figures in the reference (§8, 15 s cells there). \"staging kept\" is the default"
	echo "(atomic_write/keep_staging=1: a software write keeps the blocks it replaced as"
	echo "the next write's staging); \"staging freed\" is keep_staging=0, a separate"
	echo "filesystem on the same disk, where every write allocates staging and frees the"
	echo "old blocks. fio repeats its random offsets in every cell, so after the first"
	echo "repetition the atomic cells rewrite ranges written before, as a database"
	echo "rewrites its pages."
	for qd in 1 32; do
		echo
		echo "Queue depth $qd:"
		echo
		nvme_table $qd
	done
	echo
	echo "## A durable page: doublewrite against one RWF_ATOMIC|RWF_DSYNC write"
	echo
	echo "dwbench, queue depth 1. Batch 1: doublewrite = write the page to a doublewrite"
	echo "area, fdatasync, write it in place, fdatasync; against one"
	echo "pwritev2(RWF_ATOMIC|RWF_DSYNC). Batch 32: 32 pages to the doublewrite area,"
	echo "fdatasync, 32 in place, fdatasync; against 32 RWF_ATOMIC writes and one"
	echo "fdatasync. Target: atomic at least 1.8 times the pages per second of"
	echo "doublewrite (batch 1, hardware path)."
	echo
	dw_table
	echo
	if [ "$fio_rows" -gt 0 ] || [ "$dw_rows" -gt 0 ]; then
		echo "## Plots"
		echo
	fi
	if [ "$fio_rows" -gt 0 ]; then
		echo "![atomic/plain, queue depth 1](ratio-qd1.png)"
		echo "![atomic/plain, queue depth 32](ratio-qd32.png)"
	fi
	if [ "$dw_rows" -gt 0 ]; then
		echo "![doublewrite](doublewrite.png)"
	fi
} >"$r"

# The plots are of the fio and doublewrite cells: none for a run without.
for qd in 1 32; do
	[ "$fio_rows" -gt 0 ] || break
	plot ratio-qd$qd "RWF_ATOMIC / plain O_DIRECT IOPS, queue depth $qd (QEMU TCG)" "ratio" \
		"'$dir/ratio-hw-qd$qd.dat' using 1:2 with linespoints title 'hardware', \
		 '$dir/ratio-hw-qd$qd.dat' using 1:3 with linespoints title 'hardware, O_DSYNC', \
		 '$dir/ratio-sw-qd$qd.dat' using 1:2 with linespoints title 'software', \
		 '$dir/ratio-sw-qd$qd.dat' using 1:3 with linespoints title 'software, O_DSYNC', \
		 0.97 with lines dashtype 2 title '0.97 target'"
done
[ "$dw_rows" -eq 0 ] ||
plot doublewrite "RWF_ATOMIC|RWF_DSYNC pages/s over doublewrite, one page at a time (QEMU TCG)" "ratio" \
	"'$dir/doublewrite.dat' using 1:2 with linespoints title 'hardware device', \
	 '$dir/doublewrite.dat' using 1:3 with linespoints title 'software path', \
	 1.8 with lines dashtype 2 title '1.8 target'"
echo "report: $r"
