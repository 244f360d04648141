"""Cards: the operator's verbs on cards (`actions`: add, ready, hold, unblock, requeue,
cancel, done), the timeout budget and the split (`split`), and ending a card's live
drives (`drives`).

Above git and the store (a cancel saves the card's trees); below publishing, the drive
and the verbs on live work (`ops`), which all build on these.
"""
