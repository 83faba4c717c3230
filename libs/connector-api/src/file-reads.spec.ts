import { fileReadOptions } from './file-reads';

describe('fileReadOptions', () => {
  it('reads a whole file to its last byte, in chunks of at most 1 MiB', () => {
    expect(fileReadOptions(10 * 1024 * 1024)).toEqual({ start: 0, end: 10 * 1024 * 1024 - 1, highWaterMark: 1024 * 1024 });
  });

  it('sizes the chunk to a small file or range, but not below 16 KiB', () => {
    expect(fileReadOptions(100 * 1024)).toEqual({ start: 0, end: 100 * 1024 - 1, highWaterMark: 100 * 1024 });
    expect(fileReadOptions(1024)).toEqual({ start: 0, end: 1023, highWaterMark: 16 * 1024 });
    expect(fileReadOptions(10 * 1024 * 1024, { start: 100, end: 199 })).toEqual({ start: 100, end: 199, highWaterMark: 16 * 1024 });
  });

  it('has nothing to read for an empty file', () => {
    expect(fileReadOptions(0)).toBeUndefined();
  });
});
