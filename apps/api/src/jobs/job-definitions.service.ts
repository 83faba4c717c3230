import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ConflictError, InvalidArgumentError, NotFoundError, isContentConnector, type Connector, type ContentConnector } from '@gateway/connector-api';
import { JobSchedulesRepository, JobsRepository, type JobRecord } from '@gateway/persistence';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import { ConfigError, type GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { INDEX_JOB_DEFAULTS, withDefaults, type JobDefinition, type JobDefinitionDto, type JobDto } from '../config/job-definition.dto';
import { checkAclOptions } from './mapping/acl-mapping-check';
import { jobView } from './job-format';
import { isActive } from './job-states';
import { CronSchedule } from './schedule/cron-schedule';
import { checkSyncOptions } from '../config/sync-options';
import type { JobStore } from './job-store';

/** Job definitions: the admin API and the configuration file. */
@Injectable()
export class JobDefinitionsService implements OnApplicationBootstrap {
  constructor(
    @Inject(JobsRepository) private readonly repo: JobStore,
    private readonly registry: ConnectorRegistry,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly schedules: JobSchedulesRepository,
    private readonly clock: Clock,
  ) {}

  /** Jobs of the configuration file are created or updated at every start (the file is their source of truth). */
  async onApplicationBootstrap(): Promise<void> {
    for (const [i, declared] of this.config.jobs.definitions.entries()) {
      let def: JobDefinition;
      try {
        def = this.check(declared);
      } catch (e) {
        const param = e instanceof InvalidArgumentError ? e.parameter : e instanceof NotFoundError ? 'connectorId' : '';
        throw new ConfigError(`GATEWAY_CONFIG: jobs[${i}]${param ? '.' + param : ''}: ${(e as Error).message}`);
      }
      const now = Date.now();
      const existing = await this.repo.findJobByName(def.jobName);
      if (!existing) {
        await this.repo.insertJob({ name: def.jobName, group: def.jobGroup, origin: 'config', definition: def, now });
      } else if (JSON.stringify(existing.definition) !== JSON.stringify(def) || existing.origin !== 'config') {
        await this.repo.updateJob(existing.id, { name: def.jobName, group: def.jobGroup, definition: def, now });
        if (existing.origin !== 'config') await this.repo.setOrigin(existing.id, 'config');
      }
    }
  }

  async create(input: JobDefinitionDto): Promise<JobDto> {
    const def = this.check(withDefaults(input));
    const id = await this.repo.insertJob({ name: def.jobName, group: def.jobGroup, origin: 'api', definition: def, now: Date.now() });
    if (id === undefined) throw nameTaken(def.jobName);
    return this.view((await this.repo.findJob(id))!);
  }

  async list(): Promise<JobDto[]> {
    const jobs = await this.repo.listJobs();
    const states = await this.schedules.states(jobs.filter((j) => j.definition.schedule).map((j) => j.id));
    const now = this.clock.now();
    return jobs.map((j) => jobView(j, now, states.get(j.id)));
  }

  async get(jobId: number): Promise<JobDto> {
    return this.view(await this.find(jobId));
  }

  async update(jobId: number, input: JobDefinitionDto): Promise<JobDto> {
    const job = await this.editable(jobId);
    const def = this.check(withDefaults(input));
    if (!(await this.repo.updateJob(job.id, { name: def.jobName, group: def.jobGroup, definition: def, now: Date.now() }))) {
      throw nameTaken(def.jobName);
    }
    return this.view((await this.repo.findJob(jobId))!);
  }

  /** Deletes the job with its runs and audit records; returns the deleted definition. */
  async delete(jobId: number): Promise<JobDto> {
    const job = await this.editable(jobId);
    await this.repo.deleteJob(job.id);
    return jobView(job, this.clock.now());
  }

  private async view(job: JobRecord<JobDefinition>): Promise<JobDto> {
    const state = job.definition.schedule ? (await this.schedules.states([job.id])).get(job.id) : undefined;
    return jobView(job, this.clock.now(), state);
  }

  async find(jobId: number): Promise<JobRecord<JobDefinition>> {
    const job = await this.repo.findJob(jobId);
    if (!job) throw new NotFoundError('job', String(jobId));
    return job;
  }

  private async editable(jobId: number): Promise<JobRecord<JobDefinition>> {
    const job = await this.find(jobId);
    if (job.origin === 'config') {
      throw new ConflictError(`Job ${jobId} is declared in the configuration file; change it there`, 'JOB_FROM_CONFIG', { jobId });
    }
    const run = await this.repo.latestRun(jobId);
    if (run && isActive(run.status)) {
      throw new ConflictError(`Job ${jobId} is ${run.status}; abort it or wait for the end of the run first`, 'JOB_ACTIVE', { jobId, status: run.status });
    }
    return job;
  }

  /**
   * Connectors exist, and the options are possible with them; answers the definition as stored.
   * A target with the `index` group makes an indexing job (its defaults applied here, where the
   * connector is known); options of the other kind are refused naming them.
   */
  private check(def: JobDefinition): JobDefinition {
    if (def.schedule) CronSchedule.parse(def.schedule.cron, def.schedule.timeZone, this.clock.now());
    const { minSize, maxSize, modifiedAfter, modifiedBefore } = def.options;
    if (minSize !== undefined && maxSize !== undefined && minSize > maxSize) {
      throw new InvalidArgumentError('options.maxSize', `Invalid parameter 'options.maxSize': ${maxSize} is below minSize ${minSize}`);
    }
    if (modifiedAfter !== undefined && modifiedBefore !== undefined && Date.parse(modifiedAfter) >= Date.parse(modifiedBefore)) {
      throw new InvalidArgumentError('options.modifiedBefore', `Invalid parameter 'options.modifiedBefore': not after modifiedAfter ${modifiedAfter}`);
    }
    const source = this.connector(def.source.connectorId, 'source.connectorId');
    const anyTarget = this.anyConnector(def.target.connectorId, 'target.connectorId');
    if (anyTarget.index) return this.checkIndexing(def, anyTarget);
    if (!isContentConnector(anyTarget)) {
      throw new InvalidArgumentError('target.connectorId', `Invalid parameter 'target.connectorId': connector '${anyTarget.id}' is neither a repository nor an index`);
    }
    const target = anyTarget;
    for (const [name, given] of [
      ['target.collection', def.target.collection],
      ['options.extract', def.options.extract],
      ['options.maxContentChars', def.options.maxContentChars],
      ['options.defaultAcl', def.options.defaultAcl],
    ] as const) {
      if (given !== undefined) throw new InvalidArgumentError(name, `Invalid parameter '${name}': only for indexing jobs (a search connector as target); '${target.id}' is a repository`);
    }
    if (def.target.folderPath === undefined) {
      throw new InvalidArgumentError('target.folderPath', `Invalid parameter 'target.folderPath': required for a repository target ('${target.id}')`);
    }
    if (def.options.onExisting === 'version' && !target.contentUpdate) {
      throw new InvalidArgumentError('options.onExisting', `Invalid parameter 'options.onExisting': connector '${target.id}' cannot add versions (no content update)`);
    }
    if (def.options.copyVersions && (!source.versioning || !target.contentUpdate)) {
      throw new InvalidArgumentError(
        'options.copyVersions',
        `Invalid parameter 'options.copyVersions': needs versions at the source ('${source.id}') and content update at the target ('${target.id}')`,
      );
    }
    checkAclOptions(def, source, target);
    if (def.options.removeSource && def.source.connectorId === def.target.connectorId && overlaps(def.source.folderPath, def.target.folderPath)) {
      throw new InvalidArgumentError('options.removeSource', "Invalid parameter 'options.removeSource': source and target folders overlap");
    }
    checkSyncOptions(def.options, target, def.target.folderPath);
    return def;
  }

  /** An indexing job: a collection (given, or the connector's), no copy options, the index options' defaults. */
  private checkIndexing(def: JobDefinition, target: Connector): JobDefinition {
    const refuse = (name: string, why: string) => new InvalidArgumentError(name, `Invalid parameter '${name}': ${why} (indexing job: '${target.id}' is a search connector)`);
    if (def.target.folderPath !== undefined) throw refuse('target.folderPath', 'an index target takes `collection`, not a folder');
    if (def.options.onExisting !== 'skip') throw refuse('options.onExisting', 'every run writes the changed documents over their index entries; only skip applies');
    if (def.options.copyVersions) throw refuse('options.copyVersions', 'an index holds one document per source document, not its versions');
    if (def.options.verify !== undefined) throw refuse('options.verify', 'an index entry is not a copy of the content');
    if (def.options.onMismatch !== undefined) throw refuse('options.onMismatch', 'an index entry is not a copy of the content');
    if (def.options.names !== undefined) throw refuse('options.names', 'an index entry keeps the source name as it is');
    if (def.options.removeSource) throw refuse('options.removeSource', 'indexing never removes source documents');
    if (def.options.copyAcls !== undefined) throw refuse('options.copyAcls', 'an index entry carries the source ACL as acl_read');
    if (def.options.aclMapping !== undefined) throw refuse('options.aclMapping', 'an index entry carries the source ACL as acl_read');
    for (const name of ['mode', 'targetChanged', 'deletions', 'archiveFolder'] as const) {
      if (def.options[name] !== undefined) throw refuse(`options.${name}`, 'indexing runs are incremental already (sync options are for copy jobs)');
    }
    const collection = def.target.collection ?? target.search?.settings.collection;
    if (collection === undefined) throw refuse('target.collection', `required: connector '${target.id}' has no configured collection`);
    return {
      ...def,
      target: { connectorId: def.target.connectorId, collection },
      options: {
        ...def.options,
        extract: def.options.extract ?? INDEX_JOB_DEFAULTS.extract,
        maxContentChars: def.options.maxContentChars ?? INDEX_JOB_DEFAULTS.maxContentChars,
        defaultAcl: def.options.defaultAcl ?? INDEX_JOB_DEFAULTS.defaultAcl,
      },
    };
  }

  private anyConnector(id: string, parameter: string): Connector {
    try {
      return this.registry.any(id);
    } catch (e) {
      if (e instanceof NotFoundError) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': no connector '${id}'`);
      throw e;
    }
  }

  private connector(id: string, parameter: string): ContentConnector {
    try {
      return this.registry.get(id);
    } catch (e) {
      if (e instanceof NotFoundError) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': no connector '${id}'`);
      throw e;
    }
  }
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`A job named '${name}' already exists`, 'JOB_NAME_TAKEN', { jobName: name });
}

function overlaps(a: string, b: string): boolean {
  const inside = (x: string, y: string) => y === '/' || x === y || x.startsWith(y + '/');
  return inside(a, b) || inside(b, a);
}
