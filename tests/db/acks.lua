-- sysbench script for the database power-cut test (tests/db/db-crash.sh):
-- each event is one transaction that updates random rows of the page
-- table (so that pages are dirtied and written all over the file) and
-- inserts the thread's next sequence number into the acks table. Only
-- when COMMIT has returned is the number appended to a file outside the
-- device under test (ACK_DIR, a tmpfs): after a power cut, every number
-- in that file must be in the table.
--
--   sysbench --db-driver=mysql ... acks.lua prepare|run
--   ROWS: rows of the page table (prepare), about 1 KiB each

local rows = tonumber(os.getenv("ROWS") or "20000")

function prepare()
	local drv = sysbench.sql.driver()
	local con = drv:connect()
	con:query("CREATE TABLE pages (id INT PRIMARY KEY AUTO_INCREMENT, " ..
		  "k INT NOT NULL, pad VARCHAR(1000) NOT NULL) ENGINE=InnoDB")
	con:query("CREATE TABLE acks (tid INT NOT NULL, seq INT NOT NULL, " ..
		  "PRIMARY KEY (tid, seq)) ENGINE=InnoDB")
	con:query("INSERT INTO pages (k, pad) VALUES (0, REPEAT('p', 1000))")
	local n = 1
	while n < rows do
		con:query("INSERT INTO pages (k, pad) SELECT k, pad FROM pages LIMIT " ..
			  math.min(n, rows - n))
		n = n + math.min(n, rows - n)
	end
end

function cleanup()
	local con = sysbench.sql.driver():connect()
	con:query("DROP TABLE IF EXISTS pages")
	con:query("DROP TABLE IF EXISTS acks")
end

function thread_init()
	drv = sysbench.sql.driver()
	con = drv:connect()
	tid = sysbench.tid
	-- Go on from what the table holds: a run after a cut starts anew.
	local rs = con:query("SELECT COALESCE(MAX(seq), 0) FROM acks WHERE tid = " .. tid)
	seq = tonumber(rs:fetch_row()[1])
	ackf = assert(io.open(string.format("%s/acks.%d", os.getenv("ACK_DIR"), tid), "a"))
	nrows = tonumber(con:query("SELECT MAX(id) FROM pages"):fetch_row()[1])
end

function event()
	seq = seq + 1
	con:query("BEGIN")
	for i = 1, 4 do
		con:query(string.format("UPDATE pages SET k = k + 1, pad = REPEAT('%s', 1000) WHERE id = %d",
			string.char(97 + (seq + i) % 26), math.random(1, nrows)))
	end
	con:query(string.format("INSERT INTO acks (tid, seq) VALUES (%d, %d)", tid, seq))
	con:query("COMMIT")
	ackf:write(tid, " ", seq, "\n")
	ackf:flush()
end

function thread_done()
	ackf:close()
	con:disconnect()
end
