import re,sys
# Usage: python3 scripts/massif_peak_groups.py massif.out  (a massif output file, not ms_print text).
# Groups the peak snapshot's heap of a massif.out file by the first matching frame (innermost first).
f=sys.argv[1]
lines=open(f).read().split('\n')
snaps=[];cur=None
for l in lines:
    if l.startswith('snapshot='): cur={'tree':[]};snaps.append(cur)
    elif cur is not None and l.startswith('heap_tree='): cur['kind']=l.split('=')[1]
    elif cur is not None and l.startswith('mem_heap_B='): cur['heap']=int(l.split('=')[1])
    elif cur is not None and l.startswith('mem_heap_extra_B='): cur['extra']=int(l.split('=')[1])
    elif cur is not None and re.match(r'^\s*n\d+:',l): cur['tree'].append(l)
peak=[s for s in snaps if s.get('kind')=='peak'][0]
# parse tree: each line ' n<children>: <bytes> <desc>' indentation = depth
nodes=[]
for l in peak['tree']:
    m=re.match(r'^(\s*)n(\d+): (\d+) (.*)',l)
    nodes.append((len(m.group(1)),int(m.group(2)),int(m.group(3)),m.group(4)))
groups=[('fullCache','background full load (fullCache), chunk decode'),
        ('partialCache','views/reads: partialCache chunk decode'),
        ('LazyWriteChunk','pending writes (lazy write chunks)'),
        ('PendingWrite','pending writes'),
        ('SyncTree','sync tree / views'),
        ('ViewHost','sync tree / views'),
        ('replay','log replay'),
        ('decodeDirectory','checkpoint directory'),
        ('CheckpointReaderC','checkpoint reader other'),('NodeCodec','node decode, caller below depth 30'),('sortedPairs','ChildMap build, stack truncated at depth 30'),
       ]
# walk: compute stacks for leaves
res={}
stack=[]
for depth,nch,b,desc in nodes:
    while stack and stack[-1][0]>=depth: stack.pop()
    stack.append((depth,desc))
    if nch==0:
        path=' '.join(d for _,d in stack)
        g='other'
        for key,name in groups:
            if key in path: g=name;break
        kind='strings' if 'StringStorage' in path else ('ChildMap.Tree nodes' if 'ChildMap' in path else 'other objects')
        res[(g,kind)]=res.get((g,kind),0)+b
tot=sum(res.values())
print(f"peak heap useful {peak['heap']/2**20:.1f} MiB + malloc overhead {peak['extra']/2**20:.1f} MiB")
for k,v in sorted(res.items(),key=lambda x:-x[1]):
    if v>=0.2*2**20: print(f"{v/2**20:6.1f} MiB  {k[0]:45s} {k[1]}")
print(f"{tot/2**20:6.1f} total leaves")
