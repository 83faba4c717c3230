import { ConflictError, InvalidArgumentError, type Actor, type CheckInOutCapability } from '@gateway/connector-api';
import type { CmisConnector } from './cmis.connector';
import { gatewayId, isCheckedOut, objectId, str } from './item-info';

const MAX_COMMENT_LENGTH = 4000;

/** The checkInOut group (repositories with a versionable document type). */
export class CmisCheckInOut implements CheckInOutCapability {
  constructor(private readonly connector: CmisConnector) {}

  async checkOut(id: string, actor: Actor): Promise<string> {
    await this.connector.requireGroup('checkInOut', 'checkOut');
    const props = await this.connector.writableDocument(id, 'id');
    const user = this.connector.userFor(actor);
    if (isCheckedOut(props)) {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      this.connector.assertHolder(props, user);
      return gatewayId(props);
    }
    const type = await this.connector.typeOf(props);
    if (!type.versionable) {
      throw new InvalidArgumentError('id', `Invalid parameter 'id': documents of type '${type.id}' are not versionable and cannot be checked out`, 'NOT_VERSIONABLE');
    }
    await this.connector.client.checkOut(objectId(props), { as: user, id });
    return gatewayId(props);
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw new InvalidArgumentError('comment', `Invalid parameter 'comment': at most ${MAX_COMMENT_LENGTH} characters`);
    }
    await this.connector.requireGroup('checkInOut', 'checkIn');
    const props = await this.connector.writableDocument(id, 'id');
    if (!isCheckedOut(props)) {
      throw new ConflictError(`Document '${str(props, 'cmis:name') ?? id}' is not checked out`, 'NOT_CHECKED_OUT', { id });
    }
    const user = this.connector.userFor(actor);
    const pwc = await this.connector.ownWorkingCopy(props, user, id);
    await this.connector.client.checkIn(pwc, comment === '' ? undefined : comment, { as: user, id });
    return gatewayId(props);
  }
}
