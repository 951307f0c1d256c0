/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The packet mark bits roamd owns and the slots in them: pure arithmetic, apart from the nft
 * engine so that the configuration's parser checks a mask without the kernel layer. */

#include <stdint.h>

/* Parses and checks a mark mask: contiguous, at least 3 bits. */
int nft_mark_mask_valid(uint32_t mask);
uint32_t nft_slot_max(uint32_t mask); /* largest link slot; the one above is the VPN slot */
uint32_t nft_slot_vpn(uint32_t mask);
uint32_t nft_slot_mark(uint32_t mask, uint32_t slot);
/* The highest contiguous mask of width bits (a valid width: 3 to 7) outside used; 0 none. */
uint32_t nft_free_mask(uint32_t used, unsigned width);
