-- pg_floor: one batch of :b tasks per pgbench transaction, per client its own instance:
-- the claim (state, attempt, instance; an attempts row; the claimed and started events)
-- and the finish of what it claimed (fenced on state and instance; the attempt's end;
-- the succeeded event), one commit. wakeq commits a batch's finishes with the next
-- claim instead: the same rows and one commit a batch.
BEGIN;
WITH c AS (
  UPDATE tasks SET state = 'running', attempt = attempt + 1, instance = 'w' || :client_id,
         updated_at = 1
   WHERE id IN (SELECT id FROM tasks WHERE kind = 'bench' AND state = 'pending'
                  AND due_at <= 1 ORDER BY due_at, id LIMIT :b FOR UPDATE SKIP LOCKED)
  RETURNING id, attempt, payload),
a AS (INSERT INTO attempts (task_id, attempt, instance, started_at)
      SELECT id, attempt, 'w' || :client_id, 1 FROM c)
INSERT INTO events (task_id, at, attempt, type, detail)
  SELECT id, 1, attempt, t, '{"instance":"w1"}' FROM c, (VALUES ('claimed'), ('started')) v (t);
WITH f AS (
  UPDATE tasks SET state = 'succeeded', finished_at = 2, updated_at = 2, outcome = 'ok'
   WHERE state = 'running' AND kind = 'bench' AND instance = 'w' || :client_id
  RETURNING id, attempt),
g AS (UPDATE attempts a SET finished_at = 2, outcome = 'succeeded' FROM f
       WHERE a.task_id = f.id AND a.attempt = f.attempt)
INSERT INTO events (task_id, at, attempt, type, detail)
  SELECT id, 2, attempt, 'succeeded', '{"outcome":"ok"}' FROM f;
COMMIT;
