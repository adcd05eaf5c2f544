#define _GNU_SOURCE
#include <unistd.h>
#include <sys/file.h>
#include "CCloudStoreShims.h"

int CCloudStoreShims_syncfs(int fd) { return syncfs(fd); }
int CCloudStoreShims_flock(int fd, int operation) { return flock(fd, operation); }
