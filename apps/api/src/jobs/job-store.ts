import type { JobsStore } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';

/**
 * The job service's storage as its services use it: JobsRepository (injected by its class)
 * with the definition typed, or an in-memory fake in unit tests.
 */
export type JobStore = JobsStore<JobDefinition>;
