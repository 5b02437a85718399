# Prototype: activity-perturbation ZO (per-example loss differences) vs weight-perturbation SPSA.
import gzip, sys, time, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
D="/usr/share/datasets/fashion-mnist/"
def idx(f):
    b=gzip.open(D+f).read(); 
    return np.frombuffer(b,np.uint8,offset=16 if 'images' in f else 8)
Xtr=torch.tensor(idx("train-images-idx3-ubyte.gz").reshape(-1,1,28,28)/255.,dtype=torch.float32)
Ytr=torch.tensor(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
Xte=torch.tensor(idx("t10k-images-idx3-ubyte.gz").reshape(-1,1,28,28)/255.,dtype=torch.float32)
Yte=torch.tensor(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
mu=Xtr[:50000].mean(); sd=Xtr[:50000].std(); Xtr=(Xtr-mu)/sd; Xte=(Xte-mu)/sd
mode=sys.argv[1]; bp_layers=int(sys.argv[2]); epochs=int(sys.argv[3]); zlr=float(sys.argv[4]); seed=int(sys.argv[5]) if len(sys.argv)>5 else 0
eps=float(sys.argv[6]) if len(sys.argv)>6 else 1e-3
alr=float(sys.argv[7]) if len(sys.argv)>7 else 1e-3
torch.manual_seed(seed)
# layers as nodes (output after relu/pool)
nodes=[nn.Conv2d(1,6,5,padding=2), nn.Conv2d(6,16,5), nn.Linear(400,120), nn.Linear(120,84), nn.Linear(84,10)]
def node_fwd(i,x):
    m=nodes[i]
    if i<2: return F.max_pool2d(F.relu(m(x)),2)
    if i==2: x=x.flatten(1)
    y=m(x)
    return F.relu(y) if i<4 else y
L=len(nodes); head=L-bp_layers
body=list(range(head))
def forward(x, pert=None):
    for i in range(L):
        x=node_fwd(i,x)
        if pert is not None and i in pert: x=x+pert[i]
    return x
params=[p for m in nodes for p in m.parameters()]
def evaluate():
    with torch.no_grad():
        c=0
        for b in range(0,10000,1000): c+=(forward(Xte[b:b+1000]).argmax(1)==Yte[b:b+1000]).sum().item()
    return c/100
B=64; hlr=0.05
steps=0
for ep in range(epochs):
    decay=0.8**(ep//10)
    perm=torch.randperm(50000)
    t0=time.time()
    for s in range(0,50000-B+1,B):
        idxs=perm[s:s+B]; x=Xtr[idxs]; y=Ytr[idxs]
        if mode=="wp":
            with torch.no_grad():
                zs={i:[torch.randn_like(p) for p in nodes[i].parameters()] for i in body}
                def setp(sg):
                    for i in body:
                        for p,z in zip(nodes[i].parameters(),zs[i]): p.add_(sg*eps*z)
                setp(1); lp=F.cross_entropy(forward(x),y).item(); setp(-2); lm=F.cross_entropy(forward(x),y).item(); setp(1)
                g=max(-1,min(1,(lp-lm)/(2*eps)))
                for i in body:
                    for p,z in zip(nodes[i].parameters(),zs[i]): p.sub_(zlr*decay*g*z)
            # head BP on clean pass
            with torch.no_grad():
                h=x
                for i in range(head): h=node_fwd(i,h)
            h=h.detach()
            for i in range(head,L): h=node_fwd(i,h)
            loss=F.cross_entropy(h,y)
        elif mode=="split":  # WP passes for convs; AP suffix passes for linear body nodes
            wpb=[i for i in body if i<2]; apb=[i for i in body if i>=2]
            with torch.no_grad():
                if wpb:
                    zs={i:[torch.randn_like(p) for p in nodes[i].parameters()] for i in wpb}
                    def setp(sg):
                        for i in wpb:
                            for p,z in zip(nodes[i].parameters(),zs[i]): p.add_(sg*eps*z)
                    setp(1); lp=F.cross_entropy(forward(x),y).item(); setp(-2); lm=F.cross_entropy(forward(x),y).item(); setp(1)
                    g=max(-1,min(1,(lp-lm)/(2*eps)))
                    for i in wpb:
                        for p,z in zip(nodes[i].parameters(),zs[i]): p.sub_(zlr*decay*g*z)
                h=x
                for i in range(apb[0]): h=node_fwd(i,h)
            for a in apb:  # one AP suffix pair per linear body node, from the clean input
                with torch.no_grad():
                    out=node_fwd(a,h); u=torch.randn_like(out)
                    def suffix(o):
                        for i in range(a+1,L): o=node_fwd(i,o)
                        return o
                    lp=F.cross_entropy(suffix(out+eps*u),y,reduction='none').double()
                    lm=F.cross_entropy(suffix(out-eps*u),y,reduction='none').double()
                    gb=((lp-lm)/(2*eps)/B).float()
                out=node_fwd(a,h.detach())
                gw=torch.autograd.grad(out,list(nodes[a].parameters()),gb[:,None]*u)
                with torch.no_grad():
                    for p,gg in zip(nodes[a].parameters(),gw): p.sub_(alr*decay*gg)
                    h=node_fwd(a,h)
            h=h.detach()
            for i in range(head,L): h=node_fwd(i,h)
            loss=F.cross_entropy(h,y)
        elif mode=="mix":  # WP for convs, AP for linear body nodes
            wpb=[i for i in body if i<2]; apb=[i for i in body if i>=2]
            with torch.no_grad():
                zs={i:[torch.randn_like(p) for p in nodes[i].parameters()] for i in wpb}
                def setp(sg):
                    for i in wpb:
                        for p,z in zip(nodes[i].parameters(),zs[i]): p.add_(sg*eps*z)
                h=x; shapes={}
                for i in range(head):
                    h=node_fwd(i,h); shapes[i]=h.shape
                us={i:torch.randn(shapes[i]) for i in apb}
                setp(1); lp=F.cross_entropy(forward(x,{i:eps*us[i] for i in apb}),y,reduction='none').double()
                setp(-2); lm=F.cross_entropy(forward(x,{i:-eps*us[i] for i in apb}),y,reduction='none').double(); setp(1)
                g=max(-1,min(1,float((lp-lm).mean())/(2*eps)))
                for i in wpb:
                    for p,z in zip(nodes[i].parameters(),zs[i]): p.sub_(zlr*decay*g*z)
                gb=((lp-lm)/(2*eps)/B).float()
            h=x
            for i in range(head):
                hin=h.detach(); out=node_fwd(i,hin)
                if i in apb:
                    gout=gb.view(-1,*([1]*(out.dim()-1)))*us[i]
                    gw=torch.autograd.grad(out,list(nodes[i].parameters()),gout)
                    with torch.no_grad():
                        for p,gg in zip(nodes[i].parameters(),gw): p.sub_(alr*decay*gg)
                h=out.detach()
            for i in range(head,L): h=node_fwd(i,h)
            loss=F.cross_entropy(h,y)
        else:  # activity perturbation, per-example
            with torch.no_grad():
                h=x; shapes={}
                for i in range(head):
                    h=node_fwd(i,h); shapes[i]=h.shape
                us={i:torch.randn(shapes[i]) for i in body}
                pp={i:eps*us[i] for i in body}; pm={i:-eps*us[i] for i in body}
                lp=F.cross_entropy(forward(x,pp),y,reduction='none').double()
                lm=F.cross_entropy(forward(x,pm),y,reduction='none').double()
                gb=((lp-lm)/(2*eps)/B).float()  # dL_mean/d(dir) per example
            # replay: clean forward with local backward per body node
            h=x
            for i in range(head):
                hin=h.detach()
                out=node_fwd(i,hin)
                gout=gb.view(-1,*([1]*(out.dim()-1)))*us[i]
                gw=torch.autograd.grad(out,list(nodes[i].parameters()),gout)
                with torch.no_grad():
                    for p,g in zip(nodes[i].parameters(),gw): p.sub_(zlr*decay*g)
                h=out.detach()
            for i in range(head,L): h=node_fwd(i,h)
            loss=F.cross_entropy(h,y)
        if head<L:
            hp=[p for i in range(head,L) for p in nodes[i].parameters()]
            gs=torch.autograd.grad(loss,hp)
            with torch.no_grad():
                for p,g in zip(hp,gs):
                    if not hasattr(p,'mom'): p.mom=torch.zeros_like(p)
                    p.mom.mul_(0.9).add_(g); p.sub_(hlr*decay*p.mom)
        steps+=1
    print(f"{mode} bp{bp_layers} ep{ep+1} test {evaluate():.2f} ({time.time()-t0:.1f}s)",flush=True)
