import { GoneError } from '@gateway/errors';
import type { ItemInfo } from './connector';

/**
 * One item's change since a token. A feed says what an item IS now, not the story of how it got
 * there: `current` carries the item as it stands (created, changed, renamed or moved since the token,
 * possibly several of those), `deleted` says it is gone. A caller tells a creation from a change or a
 * move by what it recorded of that id (unknown id: created; another path: moved; another etag: content
 * changed). Graph's delta has no other word for it; where a source does name the change (SharePoint's
 * ChangeType, CMIS's changeType) the driver keeps that in `reported`, as a hint only.
 *
 * Within one pass (the pages of one `changesSince` call) an id appears at most once.
 */
export type ItemChange =
  | {
      kind: 'current';
      id: string;
      /**
       * The item now, with its path. Drivers may leave out what costs a call per item (custom
       * `properties`, check-out holder): the caller asks getItem when it needs them.
       */
      item: ItemInfo;
      reported?: 'created' | 'changed' | 'moved';
    }
  | { kind: 'deleted'; id: string };

export interface ChangePage {
  changes: ItemChange[];
  /**
   * Where to resume: after the last page of a pass, the token of the next pass; on earlier pages, a
   * token from which this pass can be re-read (a caller that saves it after applying the page
   * resumes there after a crash, seeing at most the unapplied pages again).
   */
  nextToken: string;
}

/**
 * The `changeFeed` group (changes.ts; the member is not `changes`, a name the filesystem driver keeps for its own writes): what changed in the repository since a token, instead of a listing of every
 * folder. Repository-wide: items outside the folder a caller follows are the caller's to filter by
 * `item.path` (an item moved out of it shows up with a path outside). A folder renamed or moved is
 * reported once, as itself: its descendants' paths change with it without being reported (Graph and
 * CMIS work so), so a caller that records paths rewrites those below the folder's old path.
 * Drivers whose source has no change log (filesystem, S3) leave the group out; callers re-list.
 */
export interface ChangeFeedCapability {
  /** A token meaning "now": changes made after this call are reported from it. */
  latestToken(): Promise<string>;
  /**
   * The changes since `token`, page by page, ending with the token of the next pass. A token the
   * source no longer accepts (its change log was trimmed, Graph's 410 Gone) throws
   * ChangeTokenExpiredError from the first page: the caller falls back to a full listing.
   * A token this connector never issued is refused as InvalidArgumentError naming `token`.
   */
  changesSince(token: string): AsyncIterable<ChangePage>;
}

/** The source no longer accepts a change token: a caller lists everything again, then starts from `latestToken()`. */
export class ChangeTokenExpiredError extends GoneError {
  constructor(repository: string, said?: string) {
    super(`${repository} no longer accepts this change token${said ? ` (${said})` : ''}: list again from the start`, 'CHANGE_TOKEN_EXPIRED');
  }
}
