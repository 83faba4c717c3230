import type { Actor, MoveCapability, MoveDestination } from '@gateway/connector-api';
import { GATEWAY_FIELDS, checkId, checkName } from './drive-items';
import type { GraphConnector } from './graph.connector';

/**
 * The move group: one `PATCH /drives/{drive-id}/items/{item-id}` with `parentReference.id` and `name`
 * (Microsoft Graph v1.0 "Move a DriveItem to a new folder"; a name taken there is 409 nameAlreadyExists).
 * The item id stays the id.
 */
export class GraphMoves implements MoveCapability {
  constructor(private readonly connector: GraphConnector) {}

  async moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string> {
    checkId(id, 'id');
    checkId(to.folderId, 'folderId');
    const name = checkName(to.fileName, 'fileName');
    await this.connector.writableDocument(id, actor, 'id');
    await this.connector.call({
      method: 'PATCH',
      path: await this.connector.itemPath(id),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parentReference: { id: to.folderId }, name }),
      errorContext: { id, parameter: 'folderId' },
    });
    await this.connector.setGatewayFields(id, { [GATEWAY_FIELDS.modifiedBy]: actor.username });
    return id;
  }
}
