/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <sys/socket.h>

#include "roamd-nft-internal.h"

/* nftnl expressions: the shorthands on register 1 that table inet roam's rules use
 * (roamd-nft-apps.c), and the building blocks with explicit registers for the modules with
 * rules of their own (roamd-nft-stats.c, roamd-nft-wake.c, the firewall's). */

int nft_add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
        if (!e)
                return -ENOMEM;
        nftnl_rule_add_expr(r, e);
        return 0;
}

/* meta or ct key: loaded into register 1, or set from it */
int nft_e_key(struct nftnl_rule *r, bool ct, uint32_t key, bool set)
{
        struct nftnl_expr *e = nftnl_expr_alloc(ct ? "ct" : "meta");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, ct ? NFTNL_EXPR_CT_KEY : NFTNL_EXPR_META_KEY, key);
        if (ct)
                nftnl_expr_set_u32(e, set ? NFTNL_EXPR_CT_SREG : NFTNL_EXPR_CT_DREG, NFT_REG_1);
        else
                nftnl_expr_set_u32(e, set ? NFTNL_EXPR_META_SREG : NFTNL_EXPR_META_DREG, NFT_REG_1);
        return nft_add_expr(r, e);
}

int nft_e_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
        return nft_expr_cmp(r, NFT_REG_1, op, data, len);
}

int nft_e_cmp_u8(struct nftnl_rule *r, uint32_t op, uint8_t v)
{
        return nft_e_cmp(r, op, &v, sizeof(v));
}

int nft_e_cmp_u32(struct nftnl_rule *r, uint32_t op, uint32_t v)
{
        return nft_e_cmp(r, op, &v, sizeof(v));
}

/* reg1 = (reg1 & mask) ^ xor, 4 bytes */
int nft_e_bitwise(struct nftnl_rule *r, uint32_t mask, uint32_t xor)
{
        struct nftnl_expr *e = nftnl_expr_alloc("bitwise");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, sizeof(uint32_t));
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &xor, sizeof(xor));
        return nft_add_expr(r, e);
}

int nft_e_lookup(struct nftnl_rule *r, const char *set, bool vmap, bool invert)
{
        struct nftnl_expr *e = nftnl_expr_alloc("lookup");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
        nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
        if (vmap)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_VERDICT);
        if (invert)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        return nft_add_expr(r, e);
}

int nft_e_verdict(struct nftnl_rule *r, int verdict, const char *chain)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, verdict);
        if (chain)
                nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
        return nft_add_expr(r, e);
}

int nft_e_reject(struct nftnl_rule *r, uint32_t type, uint8_t code)
{
        struct nftnl_expr *e = nftnl_expr_alloc("reject");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
        nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
        return nft_add_expr(r, e);
}

int nft_e_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
        return nft_expr_payload(r, base, offset, len, NFT_REG_1);
}

/* ---- with explicit registers, for modules with rules of their own ---- */

int nft_expr_meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("meta");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
        return nft_add_expr(r, e);
}

int nft_expr_imm(struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, dreg);
        nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, data, len);
        return nft_add_expr(r, e);
}

int nft_expr_verdict(struct nftnl_rule *r, int verdict)
{
        return nft_e_verdict(r, verdict, NULL);
}

int nft_expr_cmp(struct nftnl_rule *r, uint32_t sreg, uint32_t op, const void *data, uint32_t len)
{
        struct nftnl_expr *e = nftnl_expr_alloc("cmp");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
        nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
        return nft_add_expr(r, e);
}

int nft_expr_cmp_eq(struct nftnl_rule *r, uint32_t sreg, const void *data, uint32_t len)
{
        return nft_expr_cmp(r, sreg, NFT_CMP_EQ, data, len);
}

int nft_expr_cmp_eq_u32(struct nftnl_rule *r, uint32_t sreg, uint32_t v)
{
        return nft_expr_cmp_eq(r, sreg, &v, sizeof(v));
}

int nft_expr_ct_load(struct nftnl_rule *r, uint32_t key)
{
        return e_ct_load(r, key);
}

int nft_expr_reject(struct nftnl_rule *r, uint32_t type, uint8_t code)
{
        return nft_e_reject(r, type, code);
}

int nft_expr_jump(struct nftnl_rule *r, const char *chain)
{
        return nft_e_verdict(r, NFT_JUMP, chain);
}

int nft_expr_socket_cgroup(struct nftnl_rule *r, uint32_t level, uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("socket");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, dreg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_LEVEL, level);
        return nft_add_expr(r, e);
}

int nft_expr_and(struct nftnl_rule *r, uint32_t reg, const void *mask, uint32_t len)
{
        static const uint8_t zero[16] = {};
        struct nftnl_expr *e;

        if (len > sizeof(zero))
                return -EINVAL;
        e = nftnl_expr_alloc("bitwise");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
        return nft_add_expr(r, e);
}

int nft_expr_and_u32(struct nftnl_rule *r, uint32_t reg, uint32_t mask)
{
        return nft_expr_and(r, reg, &mask, sizeof(mask));
}

int nft_expr_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len,
                     uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("payload");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
        return nft_add_expr(r, e);
}

int nft_expr_nfproto(struct nftnl_rule *r, int family)
{
        return e_meta_load(r, NFT_META_NFPROTO) |
               nft_e_cmp_u8(r, NFT_CMP_EQ, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

int nft_expr_counter(struct nftnl_rule *r)
{
        return nft_add_expr(r, nftnl_expr_alloc("counter"));
}

int nft_expr_lookup_vmap(struct nftnl_rule *r, const char *map)
{
        return nft_e_lookup(r, map, true, false);
}

static int lookup_in(struct nftnl_rule *r, uint32_t sreg, const char *set, bool invert)
{
        struct nftnl_expr *e = nftnl_expr_alloc("lookup");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
        nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
        if (invert)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        return nft_add_expr(r, e);
}

int nft_expr_lookup_in(struct nftnl_rule *r, uint32_t sreg, const char *set)
{
        return lookup_in(r, sreg, set, false);
}

int nft_expr_lookup_not_in(struct nftnl_rule *r, uint32_t sreg, const char *set)
{
        return lookup_in(r, sreg, set, true);
}

int nft_rule_add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
        return nft_add_expr(r, e);
}
