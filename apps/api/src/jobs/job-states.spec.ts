import * as fs from 'node:fs';
import * as path from 'node:path';
import { JOB_STATES, JOB_STATUSES, allows, flagsOf, stateTableMarkdown } from './job-states';

describe('job state table', () => {
  it('is the table the jobs README shows', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, 'README.md'), 'utf8');
    expect(readme).toContain(stateTableMarkdown());
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
    expect(flagsOf('NEW')).toEqual({ canStartJob: true, canRestartJob: false, canPauseJob: false, canAbortJob: false, canResumeJob: false, canKillJob: false });
  });
});
