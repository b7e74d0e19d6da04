/** The library's version, sent in the User-Agent. A test keeps it equal to package.json's. */
export const VERSION = '0.1.0';
