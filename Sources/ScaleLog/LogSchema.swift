/// The force log's schema, by version, as `PRAGMA user_version` numbers it. A new database
/// is made by running version 1 and then every migration, so the path an old file takes is
/// the path every file takes, and the tests of a fresh database test the migrations too.
///
/// Times are `INTEGER` microseconds since the Unix epoch (`WallTime`): exact, so an export
/// gives back the digits the daemon had (a `REAL` of seconds would round the last digit
/// of some), ordered and compared as integers, and no larger on disk than a `REAL`.
enum LogSchema {
    /// The version this code writes and reads.
    static let currentVersion = 4

    /// Version 1, as the first release shipped it: devices, sessions with their summary,
    /// and readings. Readings are keyed by (session, n), n counting from 0 in the order the
    /// daemon received them, without a rowid: the key is the only index, so a reading costs
    /// its columns and little else, and a session's readings lie together in time order.
    /// Readings carry no foreign key on purpose: retention deletes a session's row at once
    /// (so listings stop showing it) and its readings afterwards in small steps.
    /// Sessions use AUTOINCREMENT so that an id is never given out twice, not even after
    /// retention has removed the newest session: leftover readings could otherwise join a
    /// new session of the same id.
    static let version1 = """
        CREATE TABLE devices (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL
        );
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            device INTEGER NOT NULL REFERENCES devices(id),
            started INTEGER NOT NULL,
            ended INTEGER,
            peak_grams REAL NOT NULL,
            stable_grams REAL,
            readings INTEGER NOT NULL,
            model TEXT NOT NULL
        );
        CREATE TABLE readings (
            session INTEGER NOT NULL,
            n INTEGER NOT NULL,
            time INTEGER NOT NULL,
            raw INTEGER NOT NULL,
            force REAL NOT NULL,
            grams REAL NOT NULL,
            flags INTEGER NOT NULL,
            contacts INTEGER NOT NULL,
            PRIMARY KEY (session, n)
        ) WITHOUT ROWID;
        """

    /// Migrations in order: `migrations[0]` takes version 1 to 2, and so on.
    ///
    /// Version 2, the second release: PEAK events get their own table (version 1 kept only
    /// the session's peak grams), and sessions get an index on their end, which retention by
    /// age and `--since` listings look sessions up by once logs grow to many thousands.
    ///
    /// Version 3: each PEAK keeps what became of its rumble, `rumble` by name (`played`,
    /// `failed`, `unavailable`, `off`; NULL where none was tried, as for PEAKs logged
    /// before), with `rumble_latency` in microseconds when it played and `rumble_errno` when
    /// it failed.
    ///
    /// Version 4: sessions say whether their peak and their stable weight were saturated
    /// (`peak_saturated`, `stable_saturated`, 0 or 1): such a weight is a lower bound. Sessions
    /// logged before are worked out from their readings' flags once, here.
    static let migrations = [
        """
        CREATE TABLE peaks (
            session INTEGER NOT NULL,
            time INTEGER NOT NULL,
            raw INTEGER NOT NULL,
            grams REAL NOT NULL
        );
        CREATE INDEX peaks_by_session ON peaks (session, time);
        CREATE INDEX sessions_by_end ON sessions (ended);
        """,
        """
        ALTER TABLE peaks ADD COLUMN rumble TEXT;
        ALTER TABLE peaks ADD COLUMN rumble_latency INTEGER;
        ALTER TABLE peaks ADD COLUMN rumble_errno INTEGER;
        """,
        """
        ALTER TABLE sessions ADD COLUMN peak_saturated INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN stable_saturated INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET
            peak_saturated = EXISTS (SELECT 1 FROM readings WHERE session = sessions.id AND flags & 1 AND grams >= sessions.peak_grams),
            stable_saturated = coalesce((SELECT flags & 1 FROM readings WHERE session = sessions.id AND flags & 2 AND contacts > 0
                                         ORDER BY n DESC LIMIT 1), 0);
        """,
    ]
}
