import { Transform } from 'node:stream';

/**
 * Passes on `length` bytes after skipping `skip`: for a server that answered a Range request with the
 * whole content (CMIS servers, SharePoint, Graph's download URLs can all do it).
 */
export function sliceBytes(skip: number, length: number): Transform {
  let toSkip = skip;
  let left = length;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (left <= 0) return callback();
      let part = chunk;
      if (toSkip > 0) {
        const n = Math.min(toSkip, part.length);
        toSkip -= n;
        part = part.subarray(n);
      }
      if (part.length > left) part = part.subarray(0, left);
      left -= part.length;
      callback(null, part.length > 0 ? part : undefined);
    },
  });
}
