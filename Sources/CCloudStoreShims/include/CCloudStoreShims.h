#ifndef CCLOUDSTORE_SHIMS_H
#define CCLOUDSTORE_SHIMS_H

/* What Swift's Glibc module does not export (GNU extensions, names that clash). */
int CCloudStoreShims_syncfs(int fd);
int CCloudStoreShims_flock(int fd, int operation);

#endif
