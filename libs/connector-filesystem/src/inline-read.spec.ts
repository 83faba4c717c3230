import { fstatSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { text } from 'node:stream/consumers';
import { InlineFileRead } from './inline-read';

describe('InlineFileRead', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'inline-read-'));
    file = path.join(dir, 'doc.txt');
    writeFileSync(file, '0123456789abcdef');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const isOpen = (fd: number) => {
    try {
      fstatSync(fd);
      return true;
    } catch {
      return false;
    }
  };

  it('reads the bytes from start for length, then closes the descriptor', async () => {
    const fd = openSync(file, 'r');
    const stream = new InlineFileRead(fd, 3, 5);
    expect(await text(stream)).toBe('34567');
    expect(isOpen(fd)).toBe(false);
  });

  it('does not read before it is asked to', () => {
    const fd = openSync(file, 'r');
    const stream = new InlineFileRead(fd, 0, 16);
    expect(stream.readableDidRead).toBe(false);
    expect(isOpen(fd)).toBe(true);
    stream.destroy();
  });

  it('ends with what is there when the file became shorter', async () => {
    const fd = openSync(file, 'r');
    const stream = new InlineFileRead(fd, 0, 16);
    truncateSync(file, 4);
    expect(await text(stream)).toBe('0123');
  });

  it('closes the descriptor when destroyed unread, and emits close', async () => {
    const fd = openSync(file, 'r');
    const stream = new InlineFileRead(fd, 0, 16);
    const closed = new Promise((resolve) => stream.once('close', resolve));
    stream.destroy();
    await closed;
    expect(isOpen(fd)).toBe(false);
  });

  it('fails the stream when the read fails', async () => {
    const fd = openSync(dir, 'r'); // a folder: read() fails with EISDIR
    const stream = new InlineFileRead(fd, 0, 16);
    await expect(text(stream)).rejects.toMatchObject({ code: 'EISDIR' });
    expect(isOpen(fd)).toBe(false);
  });
});
