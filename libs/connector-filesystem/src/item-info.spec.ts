import { mkdtempSync, lstatSync, rmSync, writeFileSync, type BigIntStats } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { documentItem, unrecordedDocumentItem } from './item-info';
import { encodeId } from './paths';
import { latestVersion, synthesizeMeta } from './record-format';

/** documentItem of the record synthesized for a file without one: what a listing showed before the shortcut. */
function synthesized(rel: string, stat: BigIntStats) {
  const meta = synthesizeMeta(rel, stat);
  return documentItem({ id: encodeId(rel), rel, stat, meta, record: latestVersion(meta) });
}

describe('unrecordedDocumentItem', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'item-info-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['a file at the root', 'notes.txt', 'hello'],
    ['a file in a folder, without extension', 'sub/dir/README', ''],
    ['a name needing escapes', 'sub/ünï cödé #1.PDF', 'x'.repeat(5000)],
  ])('describes %s exactly as its synthesized record would', (_what, rel, content) => {
    const file = path.join(dir, path.basename(rel));
    writeFileSync(file, content);
    const stat = lstatSync(file, { bigint: true });
    expect(unrecordedDocumentItem(rel, stat)).toStrictEqual(synthesized(rel, stat));
  });

  it('uses the modification time as creation time where the filesystem keeps no birth time', () => {
    const file = path.join(dir, 'born.txt');
    writeFileSync(file, 'b');
    const real = lstatSync(file, { bigint: true });
    const stat = Object.assign(Object.create(Object.getPrototypeOf(real)) as BigIntStats, real, { birthtimeNs: 0n, mtimeNs: 1_700_000_000_123_456_789n });
    const item = unrecordedDocumentItem('born.txt', stat);
    expect(item).toStrictEqual(synthesized('born.txt', stat));
    expect(item.created).toEqual(new Date(1_700_000_000_123));
    expect(item.created).not.toBe(item.modified);
  });
});
