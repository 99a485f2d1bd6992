/*
 * host_uid.c — torch_npu's host id of this machine (see host_uid.h).
 */
#include "host_uid.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Utils::GetHostUid of torch_npu: the link-layer addresses of the
 * non-loopback interfaces as lower-case hex, universal ones preferred over
 * locally administered ones, sorted, joined with "-", then two
 * multiplicative hashes (primes 29 and 131) as the high and low 32 bits. */
uint64_t aip__host_uid(void)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) != 0)
        return 0;
    char uni[32][64], loc[32][64];
    size_t n_uni = 0, n_loc = 0;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        const struct sockaddr_ll *ll = (const struct sockaddr_ll *)(const void *)i->ifa_addr;
        if (!ll->sll_halen || ll->sll_halen > 8)
            continue;
        char addr[64];
        size_t k = 0;
        for (unsigned b = 0; b < ll->sll_halen; b++)
            k += (size_t)snprintf(addr + k, sizeof addr - k, "%02x", ll->sll_addr[b]);
        int local = (ll->sll_addr[0] & 2) != 0;
        if (local && n_loc < 32)
            memcpy(loc[n_loc++], addr, k + 1);
        else if (!local && n_uni < 32)
            memcpy(uni[n_uni++], addr, k + 1);
    }
    freeifaddrs(ifa);
    char (*v)[64] = n_uni ? uni : loc;
    size_t n = n_uni ? n_uni : n_loc;
    if (!n)
        return 0;
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful of entries */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char tmp[64];
            memcpy(tmp, v[j], 64);
            memcpy(v[j], v[j - 1], 64);
            memcpy(v[j - 1], tmp, 64);
        }
    uint32_t h0 = 0, h1 = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = v[i];
        if (i) {
            h0 = h0 * 29u + (uint32_t)'-';
            h1 = h1 * 131u + (uint32_t)'-';
        }
        for (; *s; s++) {
            h0 = h0 * 29u + (uint32_t)(unsigned char)*s;
            h1 = h1 * 131u + (uint32_t)(unsigned char)*s;
        }
    }
    return ((uint64_t)h0 << 32) | h1;
}
