import { Module } from '@nestjs/common';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhooks of run events: the admin API, the file's webhooks, and the delivery worker of each node. */
@Module({ controllers: [WebhooksController], providers: [WebhooksService, WebhookDeliveryWorker] })
export class WebhooksModule {}
