/** The unit project of jest.config.js on its own, for tools that cannot select a project (Stryker's jest runner). */
const { projects, ...shared } = require('./jest.config');

module.exports = { ...shared, ...projects.find((project) => project.displayName === 'unit') };
