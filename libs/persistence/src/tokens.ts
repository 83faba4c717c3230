export const DATABASE = Symbol('DATABASE');
