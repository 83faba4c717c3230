import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ConflictError, InvalidArgumentError, NotFoundError } from '@gateway/errors';
import { WebhooksRepository, type AttemptRecord, type WebhookRecord } from '@gateway/persistence';
import { Page } from '../common/paging';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { WebhookDefinitionDto } from '../config/webhook-definition.dto';
import { DELIVERIES_PAGE_SIZE, type WebhookAttemptDto, type WebhookDeliveriesQuery, type WebhookDto } from './webhooks.dto';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The id of a webhook of the configuration file: stable across restarts and nodes while its url stays. */
export function configWebhookId(url: string): string {
  return `config-${createHash('sha256').update(url).digest('hex').slice(0, 16)}`;
}

/** Webhooks: the admin API and the configuration file. */
@Injectable()
export class WebhooksService implements OnModuleInit {
  constructor(
    @Inject(WebhooksRepository) private readonly repo: WebhooksRepository,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /**
   * The file's webhooks are created or updated at every start, and those it no longer declares are deleted
   * (the file is their source of truth). Before the jobs' start-up work, whose events they may want.
   */
  async onModuleInit(): Promise<void> {
    const declared = new Set<string>();
    const now = Date.now();
    for (const w of this.config.webhooks.definitions) {
      const id = configWebhookId(w.url);
      declared.add(id);
      await this.repo.saveWebhook({ id, url: w.url, secret: w.secret, events: w.events, origin: 'config' }, now);
    }
    for (const w of await this.repo.listWebhooks()) {
      if (w.origin === 'config' && !declared.has(w.id)) await this.repo.deleteWebhook(w.id);
    }
  }

  async create(input: WebhookDefinitionDto): Promise<WebhookDto> {
    const id = randomUUID();
    await this.repo.saveWebhook({ id, url: input.url, secret: input.secret, events: input.events, origin: 'api' }, Date.now());
    return this.get(id);
  }

  async list(): Promise<WebhookDto[]> {
    const hooks = await this.repo.listWebhooks();
    return Promise.all(hooks.map((w) => this.view(w)));
  }

  async get(id: string): Promise<WebhookDto> {
    return this.view(await this.find(id));
  }

  /** Deletes the webhook with its pending deliveries and their history; returns it. */
  async delete(id: string): Promise<WebhookDto> {
    const hook = await this.find(id);
    if (hook.origin === 'config') {
      throw new ConflictError(`Webhook ${id} is declared in the configuration file: remove it there`, 'WEBHOOK_FROM_CONFIG', { id });
    }
    const view = await this.view(hook);
    await this.repo.deleteWebhook(id);
    return { ...view, pendingDeliveries: 0 };
  }

  /** The webhook's delivery attempts, newest first, a page at a time. */
  async deliveries(id: string, query: WebhookDeliveriesQuery): Promise<Page<WebhookAttemptDto[]>> {
    await this.find(id);
    const limit = query.limit ?? DELIVERIES_PAGE_SIZE;
    const attempts = await this.repo.listAttempts(id, { before: query.cursor === undefined ? undefined : Number(query.cursor), limit: limit + 1 });
    const page = attempts.slice(0, limit);
    const next = attempts.length > limit ? String(page[page.length - 1].id) : undefined;
    return new Page(page.map(attemptView), next);
  }

  private async find(id: string): Promise<WebhookRecord> {
    if (!ID_PATTERN.test(id)) throw new InvalidArgumentError('id', `Invalid parameter 'id': must be a webhook id (got '${id}')`);
    const hook = await this.repo.findWebhook(id);
    if (!hook) throw new NotFoundError('webhook', id);
    return hook;
  }

  private async view(w: WebhookRecord): Promise<WebhookDto> {
    return {
      id: w.id,
      url: w.url,
      events: w.events,
      origin: w.origin,
      createdAt: new Date(w.createdAt).toISOString(),
      pendingDeliveries: await this.repo.pendingCount(w.id),
    };
  }
}

function attemptView(a: AttemptRecord): WebhookAttemptDto {
  return {
    id: a.id,
    time: new Date(a.attemptedAt).toISOString(),
    eventId: a.eventId,
    event: a.event,
    jobId: a.jobId,
    runId: a.runId,
    attempt: a.attempt,
    statusCode: a.statusCode,
    error: a.error,
    outcome: a.outcome,
    nextAttempt: a.nextAttemptAt === null ? null : new Date(a.nextAttemptAt).toISOString(),
    durationMs: a.durationMs,
  };
}
