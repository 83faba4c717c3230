import { DocumentFilter } from './document-filter';
import type { JobDefinition } from '../config/job-definition.dto';

const options = (patch: Partial<JobDefinition['options']>): JobDefinition['options'] => ({
  onExisting: 'skip',
  copyVersions: false,
  maxErrors: 0,
  removeSource: false,
  exclude: [],
  ...patch,
});
const at = (iso: string) => Date.parse(iso);

describe('DocumentFilter', () => {
  it('takes everything without filters', () => {
    expect(new DocumentFilter(options({})).skipReason({ rel: 'a/b.txt', size: 0 })).toBeUndefined();
  });

  it('skips by exclude, then by include (on the file name, not the folder), exclude winning', () => {
    const filter = new DocumentFilter(options({ exclude: ['~*'], include: ['*.pdf', 'report-??.txt'] }));
    expect(filter.skipReason({ rel: 'x/a.pdf' })).toBeUndefined();
    expect(filter.skipReason({ rel: 'report-01.txt' })).toBeUndefined();
    expect(filter.skipReason({ rel: 'pdf/a.txt' })).toBe('Not matched by the include patterns *.pdf, report-??.txt');
    expect(filter.skipReason({ rel: '~a.pdf' })).toBe('Excluded by pattern ^~.*$');
  });

  it('skips by size, bounds included', () => {
    const filter = new DocumentFilter(options({ minSize: 10, maxSize: 20 }));
    expect([9, 10, 20, 21].map((size) => filter.skipReason({ rel: 'a', size }))).toEqual([
      'Size 9 bytes is below minSize 10',
      undefined,
      undefined,
      'Size 21 bytes is above maxSize 20',
    ]);
    expect(filter.skipReason({ rel: 'a' })).toBeUndefined();
  });

  it('skips by modification time, strictly after and before', () => {
    const filter = new DocumentFilter(options({ modifiedAfter: '2025-01-01T00:00:00Z', modifiedBefore: '2025-02-01T00:00:00+01:00' }));
    expect(filter.skipReason({ rel: 'a', modified: at('2025-01-01T00:00:00Z') })).toBe('Modified 2025-01-01T00:00:00.000Z, not after modifiedAfter 2025-01-01T00:00:00Z');
    expect(filter.skipReason({ rel: 'a', modified: at('2025-01-15T00:00:00Z') })).toBeUndefined();
    expect(filter.skipReason({ rel: 'a', modified: at('2025-01-31T23:00:00Z') })).toBe('Modified 2025-01-31T23:00:00.000Z, not before modifiedBefore 2025-02-01T00:00:00+01:00');
    expect(filter.skipReason({ rel: 'a' })).toBeUndefined();
  });
});
