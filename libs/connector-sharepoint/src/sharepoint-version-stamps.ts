import { UpstreamError, type Actor, type StampField, type VersionStamp, type VersionStampCapability } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS } from '@gateway/microsoft-client';
import { literal, query, readCollection, readEntity, readPrimitive, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** The web locale whose form dates this driver writes: English (United States). */
const EN_US = 1033;

/**
 * The `versionStamps` group: a copied version's dates and creator set after the write by
 * `ListItem/ValidateUpdateListItem` with `bNewDocumentUpdate: true`, which overwrites the current version
 * (UpdateOverwriteVersion) instead of adding one, as a MERGE of the fields would on a real library. Form values
 * are strings as the web's locale writes them, in the web's local time, to the minute: the UTC date is turned
 * into local time by the web itself (`RegionalSettings/TimeZone/utcToLocalTime`, daylight saving included) and
 * written `M/D/YYYY h:mm AM|PM` (en-US webs only: another locale's form is refused, and the job says so).
 * Authors: SharePoint's Author/Editor are site users, so the creator goes to the GatewayCreatedBy column
 * (reported as createdBy); the last writer's column holds the latest version's only (not among `keeps`).
 */
export class SharePointVersionStamps implements VersionStampCapability {
  readonly keeps: readonly StampField[] = ['created', 'modified', 'createdBy'];
  readonly precisionMs = 60_000;
  private locale?: Promise<number>;

  constructor(private readonly connector: SharePointConnector) {}

  async stampWritten(id: string, stamp: VersionStamp, actor: Actor): Promise<void> {
    const { spId, file } = await this.connector.fileOf(id, 'id');
    this.connector.assertWritable(file, actor, id);
    const formValues: Array<{ FieldName: string; FieldValue: string }> = [];
    if (stamp.created) formValues.push({ FieldName: 'Created', FieldValue: await this.formDate(stamp.created) });
    if (stamp.modified) formValues.push({ FieldName: 'Modified', FieldValue: await this.formDate(stamp.modified) });
    if (stamp.createdBy) formValues.push({ FieldName: ATTRIBUTION_FIELDS.createdBy, FieldValue: stamp.createdBy });
    if (stamp.modifiedBy) formValues.push({ FieldName: ATTRIBUTION_FIELDS.modifiedBy, FieldValue: stamp.modifiedBy });
    if (formValues.length === 0) return;
    const answer = await this.connector.post(`web/GetFileById(${literal(spId.uid)})/ListItemAllFields/ValidateUpdateListItem`, {
      body: JSON.stringify({ formValues, bNewDocumentUpdate: true }),
      headers: { 'content-type': 'application/json;odata=nometadata' },
      errorContext: { id },
    });
    const refused = readCollection(answer).items.filter((v) => v.HasException === true);
    if (refused.length > 0) {
      throw new UpstreamError(`SharePoint refused ${refused.map((v) => `${str(v, 'FieldName') ?? '?'} (${str(v, 'ErrorMessage') ?? 'no reason given'})`).join(', ')}`);
    }
  }

  /** `date` as the web's forms take it: its local time, en-US, to the minute. */
  private async formDate(date: Date): Promise<string> {
    const locale = await this.webLocale();
    if (locale !== EN_US) throw new UpstreamError(`the web's locale ${locale} is not en-US (1033), whose form dates this connector writes`);
    const path = `web/RegionalSettings/TimeZone/utcToLocalTime(@d)${query({ '@d': literal(date.toISOString()) })}`;
    const local = readPrimitive(await this.connector.getJson(path), 'UTCToLocalTime');
    const m = typeof local === 'string' ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(local) : null;
    if (!m) throw new UpstreamError(`SharePoint answered utcToLocalTime with ${JSON.stringify(local)}`);
    const hour = Number(m[4]);
    return `${Number(m[2])}/${Number(m[3])}/${m[1]} ${hour % 12 === 0 ? 12 : hour % 12}:${m[5]} ${hour < 12 ? 'AM' : 'PM'}`;
  }

  private webLocale(): Promise<number> {
    this.locale ??= this.connector
      .getJson(`web/RegionalSettings${query({ $select: 'LocaleId' })}`)
      .then((body) => Number(readEntity(body).LocaleId))
      .catch((e: unknown) => {
        this.locale = undefined;
        throw e;
      });
    return this.locale;
  }
}
