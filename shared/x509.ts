// @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the Reflect metadata API
// loaded first; importing x509 through this module guarantees the order everywhere.
import 'reflect-metadata';

export * from '@peculiar/x509';
