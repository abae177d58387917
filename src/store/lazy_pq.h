/*
 * lazy_pq.h — libpq, loaded on first use (issue 11: a lean CLI).
 *
 * The build force-includes this header into the PostgreSQL driver (sql_postgres.c), so
 * that its calls `PQexec(...)` become calls through a table filled by dlopen/dlsym of
 * libpq the first time a postgres:// store is opened. libwakeq and the `wakeq` program
 * then do not link libpq: a command on a SQLite store never loads it (nor Kerberos, LDAP,
 * TLS …). The driver's source is unchanged; its tests link libpq directly.
 *
 * Invariant: no PQ* function is called before wq__lazy_pq_load() succeeded (the store's
 * open_postgres calls it first; every other call needs a connection it returned).
 */
#ifndef WQ_LAZY_PQ_H
#define WQ_LAZY_PQ_H

#include <libpq-fe.h>
#include <stddef.h>

#define WQ__PQ_FUNCS(X)                                                                    \
	X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconnectdbParams) X(PQconninfoFree)      \
	X(PQconninfoParse) X(PQconsumeInput) X(PQdb) X(PQdescribePrepared) X(PQerrorMessage) \
	X(PQexec) X(PQexecPrepared) X(PQfinish) X(PQfreemem) X(PQftype) X(PQgetisnull)       \
	X(PQgetlength) X(PQgetvalue) X(PQhost) X(PQisBusy) X(PQnfields) X(PQnotifies)        \
	X(PQnparams) X(PQntuples) X(PQping) X(PQport) X(PQprepare) X(PQreset)                \
	X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus)                      \
	X(PQsetNoticeReceiver) X(PQsocket) X(PQstatus) X(PQtransactionStatus)                \
	X(PQunescapeBytea) X(PQenterPipelineMode) X(PQexitPipelineMode) X(PQpipelineSync)   \
	X(PQsendQueryParams) X(PQsendQueryPrepared) X(PQgetResult)

#define WQ__LAZY_MEMBER(f) __typeof__(f) *f;
struct wq__pq_api {
	WQ__PQ_FUNCS(WQ__LAZY_MEMBER)
};

/* The loaded table (filled once wq__lazy_pq_load succeeded). */
extern struct wq__pq_api wq__pq_api;
/* Loads libpq once (thread-safe): 0, or -1 with the reason in msg. */
int wq__lazy_pq_load(char *msg, size_t msgsz);

#ifndef WQ_LAZY_NO_MACROS
#define PQclear (wq__pq_api.PQclear)
#define PQcmdStatus (wq__pq_api.PQcmdStatus)
#define PQcmdTuples (wq__pq_api.PQcmdTuples)
#define PQconnectdbParams (wq__pq_api.PQconnectdbParams)
#define PQconninfoFree (wq__pq_api.PQconninfoFree)
#define PQconninfoParse (wq__pq_api.PQconninfoParse)
#define PQconsumeInput (wq__pq_api.PQconsumeInput)
#define PQdb (wq__pq_api.PQdb)
#define PQdescribePrepared (wq__pq_api.PQdescribePrepared)
#define PQerrorMessage (wq__pq_api.PQerrorMessage)
#define PQexec (wq__pq_api.PQexec)
#define PQexecPrepared (wq__pq_api.PQexecPrepared)
#define PQfinish (wq__pq_api.PQfinish)
#define PQfreemem (wq__pq_api.PQfreemem)
#define PQftype (wq__pq_api.PQftype)
#define PQgetisnull (wq__pq_api.PQgetisnull)
#define PQgetlength (wq__pq_api.PQgetlength)
#define PQgetvalue (wq__pq_api.PQgetvalue)
#define PQhost (wq__pq_api.PQhost)
#define PQisBusy (wq__pq_api.PQisBusy)
#define PQnfields (wq__pq_api.PQnfields)
#define PQnotifies (wq__pq_api.PQnotifies)
#define PQnparams (wq__pq_api.PQnparams)
#define PQntuples (wq__pq_api.PQntuples)
#define PQping (wq__pq_api.PQping)
#define PQport (wq__pq_api.PQport)
#define PQprepare (wq__pq_api.PQprepare)
#define PQreset (wq__pq_api.PQreset)
#define PQresultErrorField (wq__pq_api.PQresultErrorField)
#define PQresultErrorMessage (wq__pq_api.PQresultErrorMessage)
#define PQresultStatus (wq__pq_api.PQresultStatus)
#define PQsetNoticeReceiver (wq__pq_api.PQsetNoticeReceiver)
#define PQsocket (wq__pq_api.PQsocket)
#define PQstatus (wq__pq_api.PQstatus)
#define PQtransactionStatus (wq__pq_api.PQtransactionStatus)
#define PQunescapeBytea (wq__pq_api.PQunescapeBytea)
/* wave5 pgw: pipeline mode (sql_postgres.c) */
#define PQenterPipelineMode (wq__pq_api.PQenterPipelineMode)
#define PQexitPipelineMode (wq__pq_api.PQexitPipelineMode)
#define PQpipelineSync (wq__pq_api.PQpipelineSync)
#define PQsendQueryParams (wq__pq_api.PQsendQueryParams)
#define PQsendQueryPrepared (wq__pq_api.PQsendQueryPrepared)
#define PQgetResult (wq__pq_api.PQgetResult)
#endif

#endif /* WQ_LAZY_PQ_H */
