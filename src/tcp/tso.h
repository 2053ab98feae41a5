/*
 * tso.h (internal) — TSO autosizing and the write-time piece size (tso.c).
 */
#ifndef BRISK_TCP_TSO_H
#define BRISK_TCP_TSO_H

#include <stdint.h>

#include "brisk/brisk.h"

/* Bytes the next segment may carry at transmit time: one MSS, or a TSO super-segment (a multiple of mss)
 * on a device that segments. */
uint32_t tcp_size_goal(const brisk_sock *c, uint32_t mss);
/* Bytes of one write-time piece of the send queue (Linux's size_goal for an skb, tcp_xmit_size_goal: one
 * MSS, or on a GSO device or under tcp_sw_gso a multiple of it up to the GSO limit and half the largest
 * window): brisk_send checks the low-water mark and places forced pushes at piece boundaries. */
uint32_t tcp_write_goal(brisk_sock *c);

#endif
