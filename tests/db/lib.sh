# shellcheck shell=bash
# MariaDB in the guest (the db image, UNTORN_IMAGE=db): a server on a data
# directory of a filesystem under test, with or without its doublewrite
# buffer and untorn-preload. Sourced by tests/db/*.sh and tests/cases/db/*.
#
#   db_setup DIR DOUBLEWRITE PRELOAD   a my.cnf in DIR/etc, data in DIR/data
#   db_install                         mariadb-install-db
#   db_start                           start mariadbd; 1 if it did not come up
#   db_stop                            clean shutdown (mariadb-admin)
#   db_kill                            SIGKILL, as a power cut leaves it
#   db_sql 'SQL'                       run SQL in the test database
#   db_preload_count NAME              the preload's counter NAME (atomic,
#                                      plain, refused, passed) so far
#
# The server is small so that a restart is quick under emulation: 16 KiB
# pages, O_DIRECT data files, an 8 MiB buffer pool (the data set is
# larger, so pages are written all the time), a 32 MiB redo log, durable
# commits (innodb_flush_log_at_trx_commit=1), no networking (a socket in
# /tmp). InnoDB submits its writes from its own threads with pwrite
# (innodb_use_native_aio=0): a path untorn-preload covers.

DB_SOCK=/tmp/untorn-db.sock
DB_NAME=untorn

db_setup() {
	DB_DIR=$1 DB_DOUBLEWRITE=$2 DB_PRELOAD=$3
	DB_DATA=$DB_DIR/data DB_CNF=/tmp/untorn-db.cnf
	DB_LOG=/tmp/untorn-db.err DB_STATS=/tmp/untorn-db.preload
	mkdir -p "$DB_DATA"
	cat > "$DB_CNF" <<EOF
[mariadbd]
user=root
datadir=$DB_DATA
socket=$DB_SOCK
skip-networking
log-error=$DB_LOG
innodb_page_size=16k
innodb_flush_method=O_DIRECT
innodb_use_native_aio=0
innodb_doublewrite=$DB_DOUBLEWRITE
innodb_buffer_pool_size=8M
innodb_log_file_size=32M
innodb_flush_log_at_trx_commit=1
innodb_fast_shutdown=1
skip-log-bin
performance_schema=OFF
[client]
socket=$DB_SOCK
user=root
EOF
}

db_install() {
	mariadb-install-db --defaults-file="$DB_CNF" --auth-root-authentication-method=normal \
		>/tmp/untorn-db.install.log 2>&1 || { cat /tmp/untorn-db.install.log; return 1; }
}

db_start() {
	rm -f "$DB_SOCK"
	if [ "$DB_PRELOAD" = yes ]; then
		LD_PRELOAD=$UNTORN_TOP/build/lib/untorn-preload.so \
		UNTORN_STATS_FILE=$DB_STATS \
			mariadbd --defaults-file="$DB_CNF" >/dev/null 2>&1 &
	else
		mariadbd --defaults-file="$DB_CNF" >/dev/null 2>&1 &
	fi
	DB_PID=$!
	for _ in $(seq 600); do
		if mariadb-admin --defaults-file="$DB_CNF" ping >/dev/null 2>&1; then
			mariadb --defaults-file="$DB_CNF" -e "CREATE DATABASE IF NOT EXISTS $DB_NAME" &&
				return 0
		fi
		kill -0 "$DB_PID" 2>/dev/null || break
		sleep 0.5
	done
	kill -9 "$DB_PID" 2>/dev/null
	wait "$DB_PID" 2>/dev/null
	return 1
}

db_stop() {
	mariadb-admin --defaults-file="$DB_CNF" shutdown >/dev/null 2>&1
	wait "$DB_PID" 2>/dev/null
}

db_kill() {
	kill -9 "$DB_PID" 2>/dev/null
	wait "$DB_PID" 2>/dev/null
}

db_sql() {
	mariadb --defaults-file="$DB_CNF" -N -B "$DB_NAME" -e "$1"
}

# The preload writes its counters at each server's exit (appended).
db_preload_count() {
	[ -f "$DB_STATS" ] || { echo 0; return; }
	awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1) } END { print s + 0 }' \
		"$DB_STATS"
}

# sysbench against the server: db_bench SCRIPT COMMAND [sysbench options].
db_bench() {
	local script=$1 cmd=$2
	shift 2
	sysbench --db-driver=mysql --mysql-socket="$DB_SOCK" --mysql-user=root \
		--mysql-db="$DB_NAME" "$@" "$script" "$cmd"
}
