import * as fs from 'node:fs';
import * as path from 'node:path';
import { ACTIONS, JOB_ACTIONS, JOB_STATES, JOB_STATUSES, RUNNER_TRANSITIONS, allows, flagsOf, isActive, movesTableMarkdown, stateTableMarkdown } from './job-states';

/** The table as a user reads it, written out: the generator must produce exactly this. */
const TABLE = `| status | statusName | canStartJob | canRestartJob | canPauseJob | canAbortJob | canResumeJob | canKillJob | runerrors |
|---|---|---|---|---|---|---|---|---|
| NEW | Not run yet | yes |  |  |  |  |  |  |
| RUNNING | Running |  |  | yes | yes |  | yes |  |
| PAUSING | Pausing |  |  |  | yes |  | yes |  |
| PAUSED | Paused |  |  |  | yes | yes |  |  |
| ABORTING | Aborting |  |  |  |  |  | yes |  |
| ABORTED | Aborted | yes | yes |  |  | yes |  |  |
| FAILED | Failed | yes | yes |  |  | yes |  | yes |
| COMPLETED | Completed | yes | yes |  |  |  |  |  |
| COMPLETED_WITH_ERRORS | Completed with errors | yes | yes |  |  |  |  | yes |`;

/** The control calls and the runner's moves, written out. */
const MOVES = `| move | HTTP | next status | effect |
|---|---|---|---|
| start | GET | RUNNING | a new run (run number + 1) over every document of the source folder |
| restart | GET (start) | RUNNING | start when a previous run exists: a fresh run, earlier results are not consulted |
| pause | GET or POST | PAUSING → PAUSED | no new documents are taken; in-flight documents finish |
| abort | GET or POST | ABORTING → ABORTED (PAUSED → ABORTED at once) | no new documents are taken; in-flight documents finish |
| resume | GET | RUNNING | the same run continues; documents it already finished (any outcome) are skipped |
| kill | GET or POST | ABORTING → ABORTED | in-flight documents are cancelled (nothing half-written stays at the target) and resume redoes them |
| runerrors | GET | RUNNING | a new run over only the documents that failed in the previous run |
| runner | | RUNNING → COMPLETED | every document finished, none failed |
| runner | | RUNNING → COMPLETED_WITH_ERRORS | every document finished, some failed (fewer than maxErrors) |
| runner | | RUNNING → FAILED | failed reached options.maxErrors or the source folder cannot be listed (no new documents are taken; FAILED once in-flight documents finished, the reason is the message meanwhile), or the process stopped mid-run (embedded mode) |
| runner | | PAUSING → PAUSED | in-flight documents finished |
| runner | | ABORTING → ABORTED | in-flight documents finished (or were cancelled by kill) |`;

describe('job state table', () => {
  it('renders as the table written out above', () => {
    expect(stateTableMarkdown()).toBe(TABLE);
  });

  it('is the table the jobs module README shows', () => {
    expect(fs.readFileSync(path.join(__dirname, 'README.md'), 'utf8')).toContain(TABLE);
  });

  it('renders the moves as written out above, and the README shows them', () => {
    expect(movesTableMarkdown()).toBe(MOVES);
    expect(fs.readFileSync(path.join(__dirname, 'README.md'), 'utf8')).toContain(MOVES);
  });

  it('answers each status and action pair from the table', () => {
    expect(allows('NEW', 'start')).toBe(true);
    expect(allows('NEW', 'restart')).toBe(false);
    expect(allows('PAUSED', 'resume')).toBe(true);
    expect(allows('PAUSED', 'kill')).toBe(false);
    expect(allows('FAILED', 'runerrors')).toBe(true);
    expect(allows('COMPLETED', 'runerrors')).toBe(false);
    expect(allows('ABORTING', 'kill')).toBe(true);
    expect(allows('ABORTING', 'abort')).toBe(false);
  });

  it('shows the six flags of a status', () => {
    expect(flagsOf('NEW')).toEqual({ canStartJob: true, canRestartJob: false, canPauseJob: false, canAbortJob: false, canResumeJob: false, canKillJob: false });
    expect(flagsOf('RUNNING')).toEqual({ canStartJob: false, canRestartJob: false, canPauseJob: true, canAbortJob: true, canResumeJob: false, canKillJob: true });
    expect(flagsOf('ABORTED')).toEqual({ canStartJob: true, canRestartJob: true, canPauseJob: false, canAbortJob: false, canResumeJob: true, canKillJob: false });
  });

  it('calls only RUNNING, PAUSING and ABORTING active; an unknown status is not active', () => {
    expect(JOB_STATUSES.filter((s) => isActive(s))).toEqual(['RUNNING', 'PAUSING', 'ABORTING']);
    expect(isActive('SOMETHING_ELSE')).toBe(false);
  });

  it('lets only inactive states start, and active states never start or resume', () => {
    for (const s of JOB_STATUSES) {
      if (JOB_STATES[s].active) {
        expect(allows(s, 'start') || allows(s, 'resume') || allows(s, 'runerrors')).toBe(false);
        expect(flagsOf(s).canKillJob).toBe(true);
      } else {
        expect(allows(s, 'pause') || allows(s, 'kill')).toBe(false);
      }
    }
  });

  it('describes every action and only moves between known statuses', () => {
    expect(Object.keys(ACTIONS).sort()).toEqual([...JOB_ACTIONS].sort());
    for (const [from, to] of RUNNER_TRANSITIONS) {
      expect(JOB_STATES[from].active).toBe(true);
      expect(JOB_STATES[to].active).toBe(false);
    }
  });
});
