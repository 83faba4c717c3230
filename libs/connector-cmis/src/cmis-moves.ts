import { UpstreamError, type Actor, type MoveCapability, type MoveDestination } from '@gateway/connector-api';
import type { CmisConnector } from './cmis.connector';
import { checkId, checkName } from './input';
import { gatewayId, isCheckedOut, objectId, str } from './item-info';

/**
 * The move group: `moveObject` from the document's parent folder into the destination, then
 * `updateProperties cmis:name` when the name changes. The version series id stays the id.
 */
export class CmisMoves implements MoveCapability {
  constructor(private readonly connector: CmisConnector) {}

  async moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string> {
    checkId(to.folderId, 'folderId');
    const name = checkName(to.fileName, 'fileName');
    const props = await this.connector.writableDocument(id, 'id', 'this connector moves documents only');
    const user = this.connector.userFor(actor);
    if (isCheckedOut(props)) this.connector.assertHolder(props, user);
    const object = objectId(props);
    const client = this.connector.client;
    const parents = await client.getParents(object, { filter: 'cmis:objectId', as: user, id });
    const from = parents[0] ? str(parents[0].object.succinctProperties, 'cmis:objectId') : undefined;
    if (from === undefined) throw new UpstreamError(`Document '${id}' is filed in no folder; it cannot be moved`);
    if (from !== to.folderId) await client.moveObject(object, from, to.folderId, { as: user, id, parameter: 'folderId' });
    if (str(props, 'cmis:name') !== name) await client.updateProperties(object, { 'cmis:name': name }, { as: user, id, parameter: 'fileName' });
    return gatewayId(props);
  }
}
