/*
 * statements.h — every SQL statement of the store, once, with $N placeholders.
 *
 * X(ID, TEXT): TEXT is the statement for both dialects, or NULL when the dialects differ;
 * then dialect_sqlite.c and dialect_postgres.c give the two variants (their variant()
 * function). Include with X defined; enum wq__sql_id below gives every statement an id
 * (the key of each connection's prepared-statement cache).
 *
 * Rules: bound parameters only (never a value spliced into text); $N numbered from 1 and
 * each number used for one argument; RETURNING and ON CONFLICT are fine on both (SQLite
 * >= 3.35 is checked at open).
 */
#ifndef WQ_STATEMENTS_H
#define WQ_STATEMENTS_H

#define WQ__SQL_STATEMENTS(X)                                                              \
	X(SQL_SCHEMA_VERSION, "SELECT max(version) FROM schema_version")                   \
	X(SQL_SET_VERSION, "INSERT INTO schema_version (version) VALUES ($1)")             \
	X(SQL_HAS_SCHEMA, NULL)                                                            \
	X(SQL_FOREIGN_TABLES, NULL)                                                        \
	X(SQL_NOTIFY, NULL)

enum wq__sql_id {
#define WQ__SQL_ENUM(id, text) id,
	WQ__SQL_STATEMENTS(WQ__SQL_ENUM)
#undef WQ__SQL_ENUM
	WQ__SQL_COUNT
};

#endif /* WQ_STATEMENTS_H */
