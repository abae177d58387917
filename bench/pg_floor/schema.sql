-- pg_floor schema: what a PostgreSQL store needs for the writes SPEC requires of a
-- drained task, nothing else (bench/pg_floor.sh). The claim's partial index holds the
-- live states (pending, running), as wakeq's tasks_claim does, so a finish finds the
-- batch it claimed without a scan. :n tasks are put there first.
DROP TABLE IF EXISTS events, attempts, tasks;
CREATE TABLE tasks (
  id bigserial PRIMARY KEY, kind text NOT NULL, operation text NOT NULL,
  payload text NOT NULL, state text NOT NULL, due_at bigint NOT NULL,
  attempt int NOT NULL DEFAULT 0, instance text NOT NULL DEFAULT '',
  updated_at bigint NOT NULL DEFAULT 0, finished_at bigint NOT NULL DEFAULT 0,
  outcome text NOT NULL DEFAULT '');
CREATE UNIQUE INDEX tasks_operation ON tasks (operation);
CREATE INDEX tasks_claim ON tasks (state, kind, due_at, id)
  WHERE state = 'pending' OR state = 'running';
CREATE TABLE attempts (
  task_id bigint NOT NULL, attempt int NOT NULL, instance text NOT NULL,
  started_at bigint NOT NULL, finished_at bigint NOT NULL DEFAULT 0,
  outcome text NOT NULL DEFAULT '', PRIMARY KEY (task_id, attempt));
CREATE TABLE events (
  id bigserial PRIMARY KEY, task_id bigint NOT NULL, at bigint NOT NULL,
  attempt int NOT NULL, type text NOT NULL, detail text NOT NULL DEFAULT '{}');
CREATE INDEX events_task ON events (task_id, id);
INSERT INTO tasks (kind, operation, payload, state, due_at)
  SELECT 'bench', 'op_' || g, '{"i":1}', 'pending', 0 FROM generate_series(1, :n) g;
VACUUM ANALYZE;
