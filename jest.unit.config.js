/** The unit project of jest.config.js on its own, for tools that cannot select a project (Stryker's jest runner). */
const { projects, ...shared } = require('./jest.config');

const unit = projects.find((project) => project.displayName === 'unit');
// MUTATION_SPECS=a.spec.ts,b.spec.ts narrows the project to those spec files: a quick lower bound on one module's
// mutation score while working on it (more tests can only kill more mutants). Unset, every unit test counts.
const only = (process.env.MUTATION_SPECS ?? '').split(',').filter(Boolean);

module.exports = { ...shared, ...unit, ...(only.length > 0 ? { testMatch: only.map((spec) => `<rootDir>/${spec}`) } : {}) };
