import { ConflictError, InvalidArgumentError, type Actor, type CheckInOutCapability } from '@gateway/connector-api';
import { checkId, GATEWAY_FIELDS } from './drive-items';
import type { GraphConnector } from './graph.connector';

const MAX_COMMENT_LENGTH = 1023;

/** The checkInOut group: SharePoint check-out through Graph, with the holder kept as the gateway user. */
export class GraphCheckInOut implements CheckInOutCapability {
  constructor(private readonly connector: GraphConnector) {}

  async checkOut(id: string, actor: Actor): Promise<string> {
    checkId(id, 'id');
    const { info } = await this.connector.writableDocument(id, actor, 'id');
    if (info.checkedOut) return id; // already the actor's: a retried request does not fail
    await this.connector.call({ method: 'POST', path: `${await this.connector.itemPath(id)}/checkout`, errorContext: { id } });
    await this.connector.setGatewayFields(id, { [GATEWAY_FIELDS.checkedOutBy]: actor.username });
    return id;
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw new InvalidArgumentError('comment', `Invalid parameter 'comment': at most ${MAX_COMMENT_LENGTH} characters`);
    }
    checkId(id, 'id');
    const { info } = await this.connector.writableDocument(id, actor, 'id');
    if (!info.checkedOut) throw new ConflictError(`Document '${info.name}' is not checked out`, 'NOT_CHECKED_OUT', { id });
    await this.connector.call({ method: 'POST', path: `${await this.connector.itemPath(id)}/checkin`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ comment: comment ?? '', checkInAs: 'published' }), errorContext: { id, parameter: 'comment' } });
    await this.connector.setGatewayFields(id, { [GATEWAY_FIELDS.checkedOutBy]: null, [GATEWAY_FIELDS.modifiedBy]: actor.username });
    return id;
  }
}
