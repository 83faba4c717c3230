import { ConflictError, InvalidArgumentError, type Actor, type CheckInOutCapability } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS } from '@gateway/microsoft-client';
import { fileId } from './ids';
import { literal, query, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

const MAX_COMMENT_LENGTH = 1023;

/** The checkInOut group: SharePoint check-out, with the holder kept as the gateway user. */
export class SharePointCheckInOut implements CheckInOutCapability {
  constructor(private readonly connector: SharePointConnector) {}

  async checkOut(id: string, actor: Actor): Promise<string> {
    const { spId, file } = await this.connector.fileOf(id, 'id');
    if (Number(file.CheckOutType ?? 2) !== 2) {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      this.connector.assertWritable(file, actor, id);
      return fileId(spId.uid);
    }
    await this.connector.post(`web/GetFileById(${literal(spId.uid)})/CheckOut()`, { errorContext: { id } });
    await this.connector.merge(spId.uid, { [ATTRIBUTION_FIELDS.checkedOutBy]: actor.username }, id);
    return fileId(spId.uid);
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw new InvalidArgumentError('comment', `Invalid parameter 'comment': at most ${MAX_COMMENT_LENGTH} characters`);
    }
    const { spId, file } = await this.connector.fileOf(id, 'id');
    if (Number(file.CheckOutType ?? 2) === 2) throw new ConflictError(`Document '${str(file, 'Name') ?? id}' is not checked out`, 'NOT_CHECKED_OUT', { id });
    this.connector.assertWritable(file, actor, id);
    await this.connector.merge(spId.uid, { [ATTRIBUTION_FIELDS.checkedOutBy]: null, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id);
    // checkintype 1 = MajorCheckIn: the gateway's versions are major versions.
    await this.connector.post(`web/GetFileById(${literal(spId.uid)})/CheckIn(comment=@c,checkintype=1)${query({ '@c': literal(comment ?? '') })}`, { errorContext: { id } });
    return fileId(spId.uid);
  }
}
