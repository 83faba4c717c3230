import type { RunStatus } from '@gateway/persistence';

/**
 * THE job state table: every status, its display name, and which control
 * actions it allows. The status record's can* flags, the control endpoints'
 * 409 answers, the README table and the OpenAPI description all come from here.
 *
 * Transitions caused by control calls are in ACTIONS (next status); the runner
 * moves a run on by itself along RUNNER_TRANSITIONS.
 */
export const JOB_ACTIONS = ['start', 'restart', 'pause', 'abort', 'resume', 'kill', 'runerrors'] as const;
export type JobAction = (typeof JOB_ACTIONS)[number];

export const JOB_STATES = {
  NEW: { name: 'Not run yet', active: false, actions: ['start'] },
  RUNNING: { name: 'Running', active: true, actions: ['pause', 'abort', 'kill'] },
  PAUSING: { name: 'Pausing', active: true, actions: ['abort', 'kill'] },
  PAUSED: { name: 'Paused', active: false, actions: ['resume', 'abort'] },
  ABORTING: { name: 'Aborting', active: true, actions: ['kill'] },
  ABORTED: { name: 'Aborted', active: false, actions: ['start', 'restart', 'resume'] },
  FAILED: { name: 'Failed', active: false, actions: ['start', 'restart', 'resume', 'runerrors'] },
  COMPLETED: { name: 'Completed', active: false, actions: ['start', 'restart'] },
  COMPLETED_WITH_ERRORS: { name: 'Completed with errors', active: false, actions: ['start', 'restart', 'runerrors'] },
} as const satisfies Record<RunStatus | 'NEW', { name: string; active: boolean; actions: readonly JobAction[] }>;

/** A run's status (RunStatus, as stored), or NEW for a job that has no run yet. */
export type JobStatus = keyof typeof JOB_STATES;
export const JOB_STATUSES = Object.keys(JOB_STATES) as JobStatus[];

/** What each control call does to the job's latest run (or to a new run). */
export const ACTIONS: Record<JobAction, { method: string; next: string; effect: string }> = {
  start: { method: 'GET', next: 'RUNNING', effect: 'a new run (run number + 1) over every document of the source folder' },
  restart: { method: 'GET (start)', next: 'RUNNING', effect: 'start when a previous run exists: a fresh run, earlier results are not consulted' },
  pause: { method: 'GET or POST', next: 'PAUSING → PAUSED', effect: 'no new documents are taken; in-flight documents finish' },
  abort: { method: 'GET or POST', next: 'ABORTING → ABORTED (PAUSED → ABORTED at once)', effect: 'no new documents are taken; in-flight documents finish' },
  kill: { method: 'GET or POST', next: 'ABORTING → ABORTED', effect: 'in-flight documents are cancelled (nothing half-written stays at the target) and resume redoes them' },
  resume: { method: 'GET', next: 'RUNNING', effect: 'the same run continues; documents it already finished (any outcome) are skipped' },
  runerrors: { method: 'GET', next: 'RUNNING', effect: 'a new run over only the documents that failed in the previous run' },
};

/** Moves the runner makes by itself. */
export const RUNNER_TRANSITIONS: Array<[from: JobStatus, to: JobStatus, when: string]> = [
  ['RUNNING', 'COMPLETED', 'every document finished, none failed'],
  ['RUNNING', 'COMPLETED_WITH_ERRORS', 'every document finished, some failed (fewer than maxErrors)'],
  [
    'RUNNING',
    'FAILED',
    'failed reached options.maxErrors or the source folder cannot be listed (no new documents are taken; FAILED once in-flight documents finished, ' +
      'the reason is the message meanwhile), or the process stopped mid-run (embedded mode)',
  ],
  ['PAUSING', 'PAUSED', 'in-flight documents finished'],
  ['ABORTING', 'ABORTED', 'in-flight documents finished (or were cancelled by kill)'],
];

export function allows(status: JobStatus, action: JobAction): boolean {
  return (JOB_STATES[status].actions as readonly JobAction[]).includes(action);
}

export function isActive(status: string): boolean {
  return (JOB_STATES as Record<string, { active: boolean }>)[status]?.active ?? false;
}

export interface JobFlags {
  canStartJob: boolean;
  canRestartJob: boolean;
  canPauseJob: boolean;
  canAbortJob: boolean;
  canResumeJob: boolean;
  canKillJob: boolean;
}

export function flagsOf(status: JobStatus): JobFlags {
  return {
    canStartJob: allows(status, 'start'),
    canRestartJob: allows(status, 'restart'),
    canPauseJob: allows(status, 'pause'),
    canAbortJob: allows(status, 'abort'),
    canResumeJob: allows(status, 'resume'),
    canKillJob: allows(status, 'kill'),
  };
}

/** The state table as Markdown (README and OpenAPI description). */
export function stateTableMarkdown(): string {
  const flags = ['canStartJob', 'canRestartJob', 'canPauseJob', 'canAbortJob', 'canResumeJob', 'canKillJob'] as const;
  const head = `| status | statusName | ${flags.join(' | ')} | runerrors |\n|---|---|${flags.map(() => '---|').join('')}---|`;
  const rows = JOB_STATUSES.map((s) => {
    const f = flagsOf(s);
    return `| ${s} | ${JOB_STATES[s].name} | ${flags.map((k) => (f[k] ? 'yes' : '')).join(' | ')} | ${allows(s, 'runerrors') ? 'yes' : ''} |`;
  });
  return [head, ...rows].join('\n');
}

/** The control calls and the runner's own moves as the jobs README shows them (a unit test keeps the two equal). */
export function movesTableMarkdown(): string {
  const calls = JOB_ACTIONS.map((a) => `| ${a} | ${ACTIONS[a].method} | ${ACTIONS[a].next} | ${ACTIONS[a].effect} |`);
  const runner = RUNNER_TRANSITIONS.map(([from, to, when]) => `| runner | | ${from} → ${to} | ${when} |`);
  return ['| move | HTTP | next status | effect |', '|---|---|---|---|', ...calls, ...runner].join('\n');
}
