import { Kysely, sql } from 'kysely';

/**
 * The documents of a run that failed, for re-running them (failedDocs: `outcome = 'e'`, in doc_id order),
 * from a partial index of just those rows. The index it replaces, (run_id, outcome), held every document's
 * row and changed twice per document (claimed, then done): 8–10 µs of a job's event loop per document on
 * SQLite, for a query that only ever asks for failures (docs/decisions/0011-job-failed-docs-partial-index.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('job_run_docs_outcome').execute();
  await db.schema
    .createIndex('job_run_docs_failed')
    .on('job_run_docs')
    .columns(['run_id', 'doc_id'])
    .where(sql.ref('outcome'), '=', sql.lit('e'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('job_run_docs_failed').execute();
  await db.schema.createIndex('job_run_docs_outcome').on('job_run_docs').columns(['run_id', 'outcome']).execute();
}
