/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNTORN_CRC32C_H
#define UNTORN_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli), as used by iSCSI, ext4 and XFS metadata. */
uint32_t ut_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
