'use strict';
// Timing one whole folder listing, through the gateway and through `rclone serve http`: the
// listing benchmarks (folderitems-vs-rclone, listing-curve) measure the same two things.

/** Reads a response to its end counting occurrences of `needle` without keeping the body. */
async function countIn(res, needle) {
  let count = 0;
  let tail = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    const text = tail + decoder.decode(chunk, { stream: true });
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
    tail = text.slice(Math.max(0, text.length - needle.length + 1));
  }
  return count;
}

const seconds = (started) => Number(process.hrtime.bigint() - started) / 1e9;

/**
 * Seconds to list folder `folderId` of connector `fs` through the gateway: one streamed answer, or
 * pages of `page` items following X-Next-Cursor. Fails unless exactly `expected` items came back.
 */
async function timeGatewayListing(gateway, folderId, expected, page) {
  const headers = { Authorization: gateway.auth };
  const started = process.hrtime.bigint();
  let cursor;
  let count = 0;
  do {
    const q = new URLSearchParams({ id: folderId });
    if (page) q.set('limit', page);
    if (cursor) q.set('cursor', cursor);
    const res = await fetch(`${gateway.baseUrl}/api/repo/fs/folderitems?${q}`, { headers });
    if (!res.ok) throw new Error(`folderitems answered ${res.status}: ${await res.text()}`);
    count += await countIn(res, '"BaseType":');
    cursor = res.headers.get('x-next-cursor') ?? undefined;
  } while (cursor);
  if (count !== expected) throw new Error(`gateway listed ${count} items, expected ${expected}`);
  return seconds(started);
}

/** Seconds for rclone's HTTP server to list `folder` (links whose name starts with `prefix`). */
async function timeRcloneListing(rclone, folder, prefix, expected) {
  const started = process.hrtime.bigint();
  const count = await countIn(await fetch(`${rclone.baseUrl}/${folder}/`), `href="${prefix}`);
  if (count !== expected) throw new Error(`rclone listed ${count} items, expected ${expected}`);
  return seconds(started);
}

module.exports = { countIn, timeGatewayListing, timeRcloneListing };
