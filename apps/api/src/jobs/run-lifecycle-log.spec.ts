import { Logger } from '@nestjs/common';
import type { JobRunRecord, TaskState } from '@gateway/persistence';
import { InMemoryJobStore, runRecord } from '../../../../test/support/in-memory-job-store';
import type { JobDefinition } from '../config/job-definition.dto';
import { logRun, settle } from './run-lifecycle';

/** The info lines settle and logRun write (run-lifecycle.ts): the operator's record of how each run ended. */
const DEF: JobDefinition = {
  jobName: 'j',
  jobGroup: 'g',
  source: { connectorId: 'a', folderPath: '/in', recursive: true },
  target: { connectorId: 'b', folderPath: '/out' },
  options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [] },
};

/** Settles a run (`patch`) whose tasks are in `tasks`; answers the new status and the lines logged meanwhile. */
async function settleLogged(patch: Partial<JobRunRecord>, tasks: Record<string, TaskState> = {}, maxErrors = 0) {
  const store = new InMemoryJobStore();
  const job = store.addJob(DEF);
  const r = store.addRun(job.id, runRecord({ ...patch, id: `${job.id}_1`, jobId: job.id }));
  for (const [key, state] of Object.entries(tasks)) store.tasks.get(r.id)!.set(key, { runId: r.id, key, kind: 'docs', payload: '{}', state });
  const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  try {
    const status = await store.transition(r.id, (locked) => settle(locked, 5000, maxErrors));
    return { status, lines: log.mock.calls, loggers: log.mock.contexts, jobId: job.id, runId: r.id };
  } finally {
    log.mockRestore();
  }
}

describe('run lifecycle log lines', () => {
  it('logRun writes the message with the job, the run, its status and its counters (discovered as total)', () => {
    const log = { log: jest.fn() };
    logRun(log, 'a message', runRecord({ jobId: 7, id: '7_2', status: 'PAUSED', read: 1, written: 2, skipped: 3, failed: 4, removed: 5, discovered: 6 }));
    expect(log.log.mock.calls).toEqual([[{ jobId: 7, runId: '7_2', status: 'PAUSED', read: 1, written: 2, skipped: 3, failed: 4, removed: 5, total: 6 }, 'a message']]);
  });

  it.each([
    ['completed', { read: 2, written: 2 }, 'COMPLETED'],
    ['completed with errors', { read: 2, written: 1, failed: 1 }, 'COMPLETED_WITH_ERRORS'],
    ['failed', { message: 'Source folder gone' }, 'FAILED'],
  ])('logs one line when settle ends a run: "%s"', async (word, patch, status) => {
    const { status: settled, lines, loggers, jobId, runId } = await settleLogged(patch);
    expect(settled).toBe(status);
    expect(lines).toEqual([[expect.objectContaining({ jobId, runId, status }), `Job ${jobId} ${word}: run ${runId}`]]);
    // Under the context an operator filters the runs' ends by.
    expect(loggers).toEqual([expect.objectContaining({ context: 'JobRuns' })]);
  });

  it('logs nothing when the run goes on, pauses or is aborted (those lines come from the control service), nor for a run that had ended', async () => {
    expect((await settleLogged({}, { a: 'active' })).lines).toEqual([]);
    expect((await settleLogged({ status: 'PAUSING' })).lines).toEqual([]);
    expect((await settleLogged({ status: 'ABORTING' })).lines).toEqual([]);
    expect((await settleLogged({ status: 'COMPLETED', endTime: 1 })).lines).toEqual([]);
    expect((await settleLogged({ status: 'FAILED', endTime: 1 })).lines).toEqual([]);
  });
});
